// First run (setup token → password + TOTP enrolment) and login.
import { useState } from 'preact/hooks';
import { api, setCsrf } from '../api';
import { QR } from '../qr';
import { getPasskey, passkeysSupported } from '../webauthn';

function Brand() {
  return (
    <div class="brand">
      <img src="/icon.svg" alt="" width={32} height={32} />
      <span>Agent OS</span>
    </div>
  );
}

function val(e: Event): string {
  return (e.target as HTMLInputElement).value;
}

export function Setup({ done }: { done: () => void }) {
  const [token, setToken] = useState('');
  const [enrol, setEnrol] = useState<{ totpSecret: string; otpauthUrl: string } | null>(null);
  const [password, setPassword] = useState('');
  const [password2, setPassword2] = useState('');
  const [code, setCode] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);

  async function begin(e: Event) {
    e.preventDefault();
    setErr('');
    setBusy(true);
    try {
      setEnrol(await api('POST', '/auth/setup/begin', { setupToken: token.trim() }));
    } catch (x) {
      setErr((x as Error).message);
    } finally {
      setBusy(false);
    }
  }
  async function complete(e: Event) {
    e.preventDefault();
    setErr('');
    if (password !== password2) return setErr('The two passwords differ.');
    if (password.length < 12) return setErr('Use at least 12 characters.');
    setBusy(true);
    try {
      const r = await api<{ csrfToken: string }>('POST', '/auth/setup/complete', { setupToken: token.trim(), password, totpCode: code.trim() });
      setCsrf(r.csrfToken);
      done();
    } catch (x) {
      setErr((x as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="auth">
      <Brand />
      <h1>Set up Agent OS</h1>
      {!enrol ? (
        <form onSubmit={begin}>
          <p class="hint">`aos up` printed a setup token in its terminal. It is valid for 24 hours.</p>
          <label for="setup-token">Setup token</label>
          <input id="setup-token" name="setupToken" autocomplete="off" spellcheck={false} required value={token} onInput={(e) => setToken(val(e))} />
          {err && <p class="error" role="alert">{err}</p>}
          <div class="actions">
            <button class="primary" type="submit" disabled={busy}>Continue</button>
          </div>
        </form>
      ) : (
        <form onSubmit={complete}>
          <h2>1. Your password</h2>
          <label for="password">Password (12 characters or more)</label>
          <input id="password" type="password" autocomplete="new-password" required minLength={12} value={password} onInput={(e) => setPassword(val(e))} />
          <label for="password2">The same password again</label>
          <input id="password2" type="password" autocomplete="new-password" required value={password2} onInput={(e) => setPassword2(val(e))} />
          <h2>2. Your authenticator app</h2>
          <p class="hint">Scan this code with an authenticator app (TOTP), or type the secret in by hand.</p>
          <QR text={enrol.otpauthUrl} label="QR code of the TOTP secret" />
          <p>
            Secret: <span class="secret" data-testid="totp-secret">{enrol.totpSecret}</span>
          </p>
          <label for="totp">The 6-digit code the app shows</label>
          <input id="totp" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={code} onInput={(e) => setCode(val(e))} />
          {err && <p class="error" role="alert">{err}</p>}
          <div class="actions">
            <button class="primary" type="submit" disabled={busy}>Create the owner account</button>
          </div>
        </form>
      )}
    </main>
  );
}

export function Login({ done, passkeys = false }: { done: () => void; passkeys?: boolean }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    setErr('');
    setBusy(true);
    try {
      const r = await api<{ csrfToken: string }>('POST', '/auth/login', { password, totpCode: code.trim() });
      setCsrf(r.csrfToken);
      setPassword('');
      done();
    } catch (x) {
      setErr((x as Error).message);
    } finally {
      setBusy(false);
    }
  }
  async function withPasskey() {
    setErr('');
    setBusy(true);
    try {
      const opts = await api('POST', '/auth/webauthn/login/begin');
      const cred = await getPasskey(opts);
      const r = await api<{ csrfToken: string }>('POST', '/auth/webauthn/login/finish', cred);
      setCsrf(r.csrfToken);
      done();
    } catch (x) {
      setErr((x as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="auth">
      <Brand />
      <h1>Log in</h1>
      <form onSubmit={submit}>
        <label for="password">Password</label>
        <input id="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(val(e))} />
        <label for="totp">Authenticator code</label>
        <input id="totp" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={code} onInput={(e) => setCode(val(e))} />
        {err && <p class="error" role="alert">{err}</p>}
        <div class="actions">
          <button class="primary" type="submit" disabled={busy}>Log in</button>
        </div>
      </form>
      {passkeys && passkeysSupported() && (
        <div class="actions">
          <button type="button" disabled={busy} onClick={withPasskey}>Log in with a passkey</button>
        </div>
      )}
    </main>
  );
}
