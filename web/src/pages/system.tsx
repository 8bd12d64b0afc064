// System: the server's health (database, workers, provider keys, counts)
// and the audit log.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { clean } from '../text';

interface Status {
  version: string;
  db: { ok: boolean; dialect: string; latencyMs: number };
  worker: { alive: boolean; lastSeenAt?: number; workers: { id: string; hostname: string; version: string; alive: boolean; lastSeen: number }[] };
  providers: { anthropic: boolean; openai: boolean };
  counts: { missionsQueued: number; missionsRunning: number; missionsWaiting: number; pendingWaits: number; wsClients: number };
}
interface Audit {
  id: number;
  at: number;
  actor: string;
  action: string;
  target: string;
}

export function SystemPage() {
  const [st, setSt] = useState<Status | null>(null);
  const [audit, setAudit] = useState<Audit[]>([]);
  const [err, setErr] = useState('');
  useEffect(() => {
    api<Status>('GET', '/system/status').then(setSt, (x) => setErr((x as Error).message));
    api<Audit[]>('GET', '/system/audit?limit=50').then(setAudit, (x) => setErr((x as Error).message));
  }, []);
  const ok = (b: boolean) => <span class={b ? 'status done' : 'status failed'}>{b ? 'ok' : 'no'}</span>;
  return (
    <section>
      <h1>System</h1>
      {err && <p class="error">{err}</p>}
      {st && (
        <div class="card" data-testid="system-status">
          <dl class="kv">
            <dt>Version</dt>
            <dd>{clean(st.version)}</dd>
            <dt>Database</dt>
            <dd>
              {ok(st.db.ok)} {clean(st.db.dialect)}, {st.db.latencyMs.toFixed(1)} ms
            </dd>
            <dt>Workers</dt>
            <dd>
              {ok(st.worker.alive)} {st.worker.workers.filter((w) => w.alive).length} alive
            </dd>
            <dt>Anthropic key</dt>
            <dd>{ok(st.providers.anthropic)}</dd>
            <dt>OpenAI key</dt>
            <dd>{ok(st.providers.openai)}</dd>
            <dt>Missions</dt>
            <dd>
              {st.counts.missionsRunning} running, {st.counts.missionsWaiting} waiting, {st.counts.missionsQueued} queued
            </dd>
            <dt>Pending waits</dt>
            <dd>{st.counts.pendingWaits}</dd>
          </dl>
        </div>
      )}
      <h2>Audit log</h2>
      <ul class="list">
        {audit.map((a) => (
          <li class="audit">
            <span class="mono">{new Date(a.at).toISOString().replace('T', ' ').slice(0, 19)}</span> <strong>{clean(a.action)}</strong>{' '}
            <span class="meta">
              {clean(a.actor)} {clean(a.target)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
