// Devices (docs/DEVICES.md): the paired devices, pairing a new one (the
// one-time code and the aos:// URL, drawn as a QR code too; the code
// expires after 5 minutes and is shown only here, once), and revoking one
// after a confirmation.
import { useEffect, useState } from 'preact/hooks';
import { api, type Device, type DevicePairing } from '../api';
import { QR } from '../qr';
import { ago, clean } from '../text';
import { ErrorNote, failure, type Failure } from '../components/errnote';

export function DevicesPage() {
  const [list, setList] = useState<Device[] | null>(null);
  const [name, setName] = useState('');
  const [pairing, setPairing] = useState<DevicePairing | null>(null);
  const [confirming, setConfirming] = useState('');
  const [err, setErr] = useState<Failure>(null);
  const [busy, setBusy] = useState(false);
  const load = () => api<Device[]>('GET', '/devices').then(setList, (x) => setErr(failure(x)));
  useEffect(() => void load(), []);
  async function pair(e: Event) {
    e.preventDefault();
    setErr(null);
    setBusy(true);
    try {
      setPairing(await api<DevicePairing>('POST', '/devices/pairings', { name: name.trim() }));
      setName('');
    } catch (x) {
      setErr(failure(x));
    } finally {
      setBusy(false);
    }
  }
  async function revoke(d: Device) {
    setErr(null);
    try {
      await api('DELETE', `/devices/${encodeURIComponent(d.id)}`);
      setConfirming('');
      await load();
    } catch (x) {
      setErr(failure(x));
    }
  }
  // Only an aos:// pairing URL is drawn; its text is shown as text.
  const url = pairing && /^aos:\/\/pair\?/.test(pairing.url) ? pairing.url : '';
  return (
    <section>
      <h1>Devices</h1>
      <ErrorNote f={err} />
      {list && list.length === 0 && <p class="empty">No device paired.</p>}
      <ul class="list" data-testid="devices">
        {list?.map((d) => (
          <li class="card row" data-testid="device">
            <div>
              <strong>{clean(d.name)}</strong>
              <div class="meta">
                paired {ago(d.createdAt)}
                {d.lastSeenAt ? ` · seen ${ago(d.lastSeenAt)}` : ' · never connected'}
                {d.connected > 0 && ` · ${d.connected} connected`}
              </div>
            </div>
            <span class="spacer" />
            {d.revokedAt ? (
              <span class="tag bad">revoked</span>
            ) : confirming === d.id ? (
              <span class="actions" role="group" aria-label={`Revoke ${clean(d.name)}?`}>
                <button class="small danger" onClick={() => revoke(d)}>Revoke {clean(d.name)}</button>
                <button class="small" onClick={() => setConfirming('')}>Keep it</button>
              </span>
            ) : (
              <button class="small" onClick={() => setConfirming(d.id)}>Revoke…</button>
            )}
          </li>
        ))}
      </ul>
      <h2>Pair a device</h2>
      <form class="card" onSubmit={pair}>
        <label for="dname">Device name</label>
        <input id="dname" required maxLength={100} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <div class="actions">
          <button class="primary" type="submit" disabled={busy || !name.trim()}>Make a pairing code</button>
        </div>
      </form>
      {pairing && (
        <div class="card" data-testid="pairing" aria-live="polite">
          <p>
            One-time code for {clean(pairing.name)} (expires {new Date(pairing.expiresAt).toLocaleTimeString()}):
          </p>
          <p class="mono" data-testid="pairing-code">{clean(pairing.code)}</p>
          <p class="mono" data-testid="pairing-url">{clean(pairing.url)}</p>
          {url && <QR text={url} label="The pairing URL as a QR code" />}
        </div>
      )}
    </section>
  );
}
