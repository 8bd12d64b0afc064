// Settings: mission defaults and the daily cap (PUT /settings writes only
// the fields given).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';

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
      <p class="hint">Passkeys and API tokens: `aos token` in the CLI for now.</p>
    </section>
  );
}
