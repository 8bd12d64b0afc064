// Reveals: seed 000's "Desktop reveal after preparation" mapped onto the
// console (docs/AGENTS.md). As soon as a preparation creates an agent, the
// server keeps a pending reveal {operationId, machineId, agentId} in its
// journal. The signed-in console fetches the pending ones (every 2 s
// while the page is visible, as the seed's CLI retries), shows each agent
// as a notice with a link to its page, and only after the notice is on
// screen acknowledges it (POST /operations/{id}/opened, the seed's
// device_prepare_opened). It never creates an agent or a mission and never
// answers an approval. Reveals of one agent are joined into one notice;
// an acknowledged reveal is never delivered again, so a repeated
// operation id shows nothing new.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Reveal } from '../api';
import { clean } from '../text';

const EVERY_MS = 2000;

/** Reveals shows the agents prepared since the console last acknowledged. */
export function Reveals() {
  const [shown, setShown] = useState<Shown[]>([]);
  const acked = useRef(new Set<string>()); // operation ids acknowledged by this page
  const acking = useRef(new Set<string>()); // acknowledgements in flight

  useEffect(() => {
    let alive = true;
    let timer: number | undefined;
    const poll = async () => {
      clearTimeout(timer);
      if (!document.hidden) {
        try {
          const rs = await api<Reveal[]>('GET', '/agents/reveals');
          if (alive) setShown((prev) => merge(prev, rs.filter((r) => !acked.current.has(r.operationId))));
        } catch {
          /* stays pending on the server: the next poll delivers it */
        }
      }
      if (alive) timer = window.setTimeout(poll, EVERY_MS);
    };
    const onVisible = () => !document.hidden && void poll();
    document.addEventListener('visibilitychange', onVisible);
    void poll();
    return () => {
      alive = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, []);

  // After a render has put the notices on screen, acknowledge what they show.
  useEffect(() => {
    for (const r of shown) {
      for (const op of r.ops) {
        if (acked.current.has(op) || acking.current.has(op)) continue;
        acking.current.add(op);
        api('POST', `/operations/${encodeURIComponent(op)}/opened`, { agentId: r.agentId })
          .then(() => acked.current.add(op))
          .catch(() => {}) // pending on the server: a later poll retries
          .finally(() => acking.current.delete(op));
      }
    }
  }, [shown]);

  if (shown.length === 0) return null;
  return (
    <section class="reveals" aria-label="Prepared agents" data-testid="reveals">
      {shown.map((r) => (
        <div class="reveal" role="status" data-testid="reveal" data-agent={r.agentId} key={r.agentId}>
          <span>
            Agent <strong>{clean(r.agentName)}</strong>
            {r.packageId && <> ({clean(r.packageId)})</>} was prepared on this machine.
          </span>{' '}
          <a href={`/agents/?id=${encodeURIComponent(r.agentId)}`} data-testid="reveal-link">
            Open the agent
          </a>{' '}
          <button class="small" onClick={() => setShown((prev) => prev.filter((x) => x.agentId !== r.agentId))}>
            Dismiss
          </button>
        </div>
      ))}
    </section>
  );
}

/** Shown is a notice: one agent, and the operations that revealed it. */
type Shown = Reveal & { ops: string[] };

/** merge joins new reveals into the notices, one per agent. */
function merge(prev: Shown[], rs: Reveal[]): Shown[] {
  let out = prev;
  for (const r of rs) {
    const i = out.findIndex((x) => x.agentId === r.agentId);
    if (i < 0) out = [...out, { ...r, ops: [r.operationId] }];
    else if (!out[i].ops.includes(r.operationId)) out = out.map((x, j) => (j === i ? { ...x, ops: [...x.ops, r.operationId] } : x));
  }
  return out;
}
