// Home: what needs the owner first (approvals, questions), then running
// missions with live spend, and today's spend against the daily cap.
import { useEffect, useState } from 'preact/hooks';
import { api, type Mission, type Run, type Spend, type Wait } from '../api';
import { WaitCard } from '../components/wait';
import { notificationsAvailable } from '../notify';
import { useLive } from '../live';
import { clean, usd } from '../text';

export const ACTIVE = new Set(['queued', 'running', 'waiting']);

export function Home() {
  const waits = useLive<Wait[]>('/waits?status=pending', (e) => e.kind.startsWith('wait.'));
  const missions = useLive<Mission[]>('/missions', (e) => e.kind.startsWith('run.') && e.kind !== 'run.usage' || e.kind.startsWith('wait.'), (e, set) => {
    if (e.kind === 'run.usage' && typeof e.payload?.missionSpentUsd === 'number') {
      set((ms) => ms?.map((m) => (m.id === e.missionId ? { ...m, spentUsd: e.payload.missionSpentUsd } : m)));
    }
  });
  const spend = useLive<Spend>('/spend', (e) => e.kind === 'run.usage' || e.kind === 'run.completed');
  const active = (missions.data ?? []).filter((m) => ACTIVE.has(m.status));

  return (
    <section>
      <h1>Home</h1>
      <h2>Needs you</h2>
      <NotifyButton />
      {waits.error && <p class="error">{waits.error}</p>}
      {waits.data && waits.data.length === 0 && <p class="empty" data-testid="nothing-pending">Nothing needs you right now.</p>}
      {waits.data?.map((w) => <WaitCard key={w.id} wait={w} />)}

      <h2>Running</h2>
      {missions.data && active.length === 0 && <p class="empty">No mission is running. <a href="/missions/">Start one</a>.</p>}
      <ul class="list">
        {active.map((m) => (
          <li key={m.id} class="card">
            <a class="item" href={`/mission/?id=${encodeURIComponent(m.id)}`}>
              <div class="row">
                <strong>{clean(m.title || m.spec?.objective)}</strong>
                <span class={`status ${m.status}`}>{m.status}</span>
              </div>
              <RunBudget mission={m} />
            </a>
          </li>
        ))}
      </ul>

      <h2>Today's spend</h2>
      {spend.data && (
        <div class="card" data-testid="today-spend">
          <span class="stat">{usd(spend.data.todayUsd)}</span>
          <span class="meta"> {spend.data.capUsd > 0 ? `of ${usd(spend.data.capUsd)} daily cap` : 'no daily cap set'}</span>
          {spend.data.capUsd > 0 && <Bar frac={spend.data.todayUsd / spend.data.capUsd} label="Today's spend against the daily cap" />}
          {spend.data.capReached && <p class="error">The daily cap is reached: new missions are refused until tomorrow (UTC).</p>}
        </div>
      )}
      <h2>System</h2>
      <Health />
    </section>
  );
}

/** Health is one line of system health, with a link to the System page. */
function Health() {
  const st = useLive<{ db: { ok: boolean; latencyMs: number }; worker: { alive: boolean; workers: { alive: boolean }[] } }>('/system/status', () => false);
  if (!st.data) return st.error ? <p class="error">{st.error}</p> : null;
  const alive = st.data.worker.workers.filter((w) => w.alive).length;
  return (
    <p class="card" data-testid="health">
      <span class={st.data.db.ok ? 'status done' : 'status failed'}>{st.data.db.ok ? 'database ok' : 'database down'}</span>{' '}
      <span class={st.data.worker.alive ? 'status done' : 'status failed'}>{alive === 1 ? '1 worker' : `${alive} workers`}</span>{' '}
      <a href="/system/">System</a>
    </p>
  );
}

/** NotifyButton asks for permission to notify (a user gesture is needed). */
function NotifyButton() {
  const [perm, setPerm] = useState(notificationsAvailable() ? Notification.permission : 'denied');
  if (perm !== 'default') return null;
  return (
    <button class="small" onClick={() => Notification.requestPermission().then(setPerm)}>
      Notify me of new approvals while this page is open
    </button>
  );
}

/** RunBudget shows a mission's spend against its root run's USD budget. */
function RunBudget({ mission }: { mission: Mission }) {
  const [budget, setBudget] = useState(0);
  useEffect(() => {
    api<Run>('GET', `/runs/${encodeURIComponent(mission.rootRunId)}`).then((r) => setBudget(r.budget?.usd ?? 0), () => {});
  }, [mission.rootRunId]);
  return <BudgetBar spent={mission.spentUsd} budget={budget} />;
}

/** Bar is a progress bar (0..1), its width set through CSSOM, not inline HTML. */
export function Bar({ frac, label }: { frac: number; label: string }) {
  const pct = Math.max(0, Math.min(1, isFinite(frac) ? frac : 0)) * 100;
  return (
    <div class="bar" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct)}>
      <span style={{ width: `${pct}%` }} />
    </div>
  );
}

export function BudgetBar({ spent, budget }: { spent: number; budget: number }) {
  return (
    <div>
      <span class="meta" data-testid="spend">
        {usd(spent)}
        {budget > 0 ? ` of ${usd(budget)}` : ''}
      </span>
      {budget > 0 && <Bar frac={spent / budget} label="Spend against the budget" />}
    </div>
  );
}
