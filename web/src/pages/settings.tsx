// Settings: mission defaults and the daily cap (PUT /settings writes only
// the fields given).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { clean, ago } from '../text';
import { createPasskey, passkeysSupported } from '../webauthn';

interface Settings {
  dailyBudgetUsd: number | null;
  defaultModel: string | null;
  defaultEffort: string | null;
  defaultBudgetUsd: number | null;
  defaultMaxTurns: number | null;
}

export function SettingsPage() {
  const [s, setS] = useState<Settings | null>(null);
  const [cap, setCap] = useState('');
  const [model, setModel] = useState('');
  const [budget, setBudget] = useState('');
  const [turns, setTurns] = useState('');
  const [msg, setMsg] = useState('');
  const [err, setErr] = useState('');
  function fill(v: Settings) {
    setS(v);
    setCap(v.dailyBudgetUsd == null ? '' : String(v.dailyBudgetUsd));
    setModel(v.defaultModel ?? '');
    setBudget(v.defaultBudgetUsd == null ? '' : String(v.defaultBudgetUsd));
    setTurns(v.defaultMaxTurns == null ? '' : String(v.defaultMaxTurns));
  }
  useEffect(() => {
    api<Settings>('GET', '/settings').then(fill, (x) => setErr((x as Error).message));
  }, []);
  async function save(e: Event) {
    e.preventDefault();
    setErr('');
    setMsg('');
    const body: Record<string, unknown> = {};
    if (cap.trim() !== '') body.dailyBudgetUsd = Number(cap);
    if (model.trim() !== '') body.defaultModel = model.trim();
    if (budget.trim() !== '') body.defaultBudgetUsd = Number(budget);
    if (turns.trim() !== '') body.defaultMaxTurns = Number(turns);
    try {
      fill(await api<Settings>('PUT', '/settings', body));
      setMsg('Saved.');
    } catch (x) {
      setErr((x as Error).message);
    }
  }
  return (
    <section>
      <h1>Settings</h1>
      {s && (
        <form class="card" onSubmit={save}>
          <label for="cap">Daily spending cap (USD; 0 for none)</label>
          <input id="cap" type="number" min="0" step="0.01" value={cap} onInput={(e) => setCap((e.target as HTMLInputElement).value)} />
          <p class="hint">New missions are refused once today's spend (UTC) reaches it.</p>
          <label for="dmodel">Default model</label>
          <input id="dmodel" value={model} onInput={(e) => setModel((e.target as HTMLInputElement).value)} />
          <label for="dbudget">Default mission budget (USD)</label>
          <input id="dbudget" type="number" min="0.01" step="0.01" value={budget} onInput={(e) => setBudget((e.target as HTMLInputElement).value)} />
          <label for="dturns">Default turn limit</label>
          <input id="dturns" type="number" min="1" step="1" value={turns} onInput={(e) => setTurns((e.target as HTMLInputElement).value)} />
          {err && <p class="error" role="alert">{err}</p>}
          {msg && <p role="status">{msg}</p>}
          <div class="actions">
            <button class="primary" type="submit">Save</button>
          </div>
        </form>
      )}
      <Passkeys />
      <Tokens />
    </section>
  );
}

interface Passkey {
  id: string;
  name?: string;
  createdAt: number;
  lastUsedAt?: number;
}

/** Passkeys lists the owner's passkeys, adds one (a fresh login is needed) and removes one. */
function Passkeys() {
  const [list, setList] = useState<Passkey[] | null>(null);
  const [name, setName] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const load = () => api<Passkey[]>('GET', '/auth/webauthn/credentials').then(setList, (x) => setErr((x as Error).message));
  useEffect(() => void load(), []);
  async function add(e: Event) {
    e.preventDefault();
    setErr('');
    setBusy(true);
    try {
      const opts = await api('POST', '/auth/webauthn/register/begin');
      const cred = await createPasskey(opts);
      await api('POST', `/auth/webauthn/register/finish?name=${encodeURIComponent(name.trim() || 'passkey')}`, cred);
      setName('');
      await load();
    } catch (x) {
      setErr((x as Error).message);
    } finally {
      setBusy(false);
    }
  }
  async function del(p: Passkey) {
    try {
      await api('DELETE', `/auth/webauthn/credentials/${encodeURIComponent(p.id)}`);
      await load();
    } catch (x) {
      setErr((x as Error).message);
    }
  }
  return (
    <>
      <h2>Passkeys</h2>
      <ul class="list" data-testid="passkeys">
        {list?.map((p) => (
          <li class="card row">
            <div>
              <strong>{clean(p.name || 'passkey')}</strong>
              <div class="meta">added {ago(p.createdAt)}{p.lastUsedAt ? `, used ${ago(p.lastUsedAt)}` : ''}</div>
            </div>
            <span class="spacer" />
            <button class="small" onClick={() => del(p)} aria-label={`Remove the passkey ${clean(p.name || '')}`}>Remove</button>
          </li>
        ))}
      </ul>
      {list && list.length === 0 && <p class="empty">No passkey yet.</p>}
      {passkeysSupported() ? (
        <form class="card" onSubmit={add}>
          <label for="pkname">Name of the new passkey</label>
          <input id="pkname" maxLength={100} placeholder="my phone" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          <p class="hint">A passkey logs you in without password or code. Adding one needs a login of the last 15 minutes.</p>
          <div class="actions">
            <button class="primary" type="submit" disabled={busy}>Add a passkey</button>
          </div>
        </form>
      ) : (
        <p class="hint">This browser cannot use passkeys here (they need HTTPS or localhost).</p>
      )}
      {err && <p class="error" role="alert">{err}</p>}
    </>
  );
}

interface Token {
  id: string;
  name: string;
  scopes: string[];
  createdAt: number;
  revokedAt?: number;
}

/** Tokens lists API tokens, creates one (its secret shown once) and revokes one. */
function Tokens() {
  const [list, setList] = useState<Token[] | null>(null);
  const [name, setName] = useState('');
  const [scope, setScope] = useState('read');
  const [secret, setSecret] = useState('');
  const [err, setErr] = useState('');
  const load = () => api<Token[]>('GET', '/tokens').then(setList, (x) => setErr((x as Error).message));
  useEffect(() => void load(), []);
  async function add(e: Event) {
    e.preventDefault();
    setErr('');
    try {
      const t = await api<{ token: string }>('POST', '/tokens', { name: name.trim(), scopes: [scope] });
      setSecret(t.token);
      setName('');
      await load();
    } catch (x) {
      setErr((x as Error).message);
    }
  }
  async function revoke(t: Token) {
    try {
      await api('DELETE', `/tokens/${encodeURIComponent(t.id)}`);
      await load();
    } catch (x) {
      setErr((x as Error).message);
    }
  }
  return (
    <>
      <h2>API tokens</h2>
      <ul class="list" data-testid="tokens">
        {list?.filter((t) => !t.revokedAt).map((t) => (
          <li class="card row">
            <div>
              <strong>{clean(t.name)}</strong>
              <div class="meta">{t.scopes.map(clean).join(', ')} · created {ago(t.createdAt)}</div>
            </div>
            <span class="spacer" />
            <button class="small danger" onClick={() => revoke(t)} aria-label={`Revoke the token ${clean(t.name)}`}>Revoke</button>
          </li>
        ))}
      </ul>
      {secret && (
        <div class="card needs" role="status">
          <p>The new token, shown this once:</p>
          <p class="secret" data-testid="new-token">{secret}</p>
          <button class="small" onClick={() => setSecret('')}>I have copied it</button>
        </div>
      )}
      {err && <p class="error" role="alert">{err}</p>}
      <form class="card" onSubmit={add}>
        <div class="row">
          <div>
            <label for="tname">Token name</label>
            <input id="tname" required maxLength={100} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </div>
          <div>
            <label for="tscope">Scope</label>
            <select id="tscope" value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value)}>
              <option value="read">read</option>
              <option value="write">write (and read)</option>
            </select>
          </div>
        </div>
        <div class="actions">
          <button class="primary" type="submit">Create a token</button>
        </div>
      </form>
    </>
  );
}
