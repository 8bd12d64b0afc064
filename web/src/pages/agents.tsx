// Agents: the prepared agents (docs/AGENTS.md), one agent's details, and
// sending it a task. The send's idempotency key is made once per intent
// (a task typed) and kept across retries of that task; the receipt links
// to the mission the task became.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, newKey, type Agent, type Receipt, type StoreList } from '../api';
import { clean } from '../text';
import { ErrorNote, failure, type Failure } from '../components/errnote';

/** agentPage is how many agents one request of the list asks for. */
const agentPage = 100;

export function AgentsPage({ id }: { id: string }) {
  const [list, setList] = useState<Agent[] | null>(null);
  const [more, setMore] = useState(false);
  const [err, setErr] = useState<Failure>(null);
  // load reads the page after the last agent shown (the first page when
  // none is): the API answers pages of agentPage, oldest first.
  const load = (after: Agent | undefined) => {
    const q = `?limit=${agentPage}` + (after ? `&after=${encodeURIComponent(after.agentId)}` : '');
    api<Agent[]>('GET', '/agents' + q).then(
      (page) => {
        setList((prev) => [...(after ? prev ?? [] : []), ...page]);
        setMore(page.length === agentPage);
      },
      (x) => setErr(failure(x)),
    );
  };
  useEffect(() => load(undefined), []);
  return (
    <section>
      <h1>Agents</h1>
      <ErrorNote f={err} />
      {id && <AgentDetail id={id} />}
      {list && list.length === 0 && (
        <p class="empty">
          No agent yet. Prepare one from the <a href="/store/">store</a>.
        </p>
      )}
      <ul class="list" data-testid="agents">
        {list?.map((a) => (
          <li>
            <a class="item card" href={`/agents/?id=${encodeURIComponent(a.agentId)}`} aria-current={a.agentId === id ? 'true' : undefined}>
              <strong>{clean(a.packageId ?? a.agentId)}</strong> <span class="tag">{clean(a.state ?? a.runtime)}</span>
              <div class="meta mono">{clean(a.workspace)}</div>
            </a>
          </li>
        ))}
      </ul>
      {more && list && (
        <button class="small" data-testid="agents-more" onClick={() => load(list[list.length - 1])}>
          More agents
        </button>
      )}
    </section>
  );
}

function AgentDetail({ id }: { id: string }) {
  const [a, setA] = useState<Agent | null>(null);
  const [err, setErr] = useState<Failure>(null);
  useEffect(() => {
    setA(null);
    api<Agent>('GET', `/agents/${encodeURIComponent(id)}`).then(setA, (x) => setErr(failure(x)));
  }, [id]);
  if (err) return <ErrorNote f={err} />;
  if (!a) return <p class="empty">Loading…</p>;
  return (
    <div class="card" data-testid="agent">
      <h2>{clean(a.packageId ?? 'Agent')}</h2>
      <dl class="kv">
        <dt>Agent</dt>
        <dd class="mono">{clean(a.agentId)}</dd>
        <dt>Workspace</dt>
        <dd class="mono">{clean(a.workspace)}</dd>
        <dt>Engine</dt>
        <dd>{clean(a.engine)}</dd>
        <dt>State</dt>
        <dd>{clean(a.state ?? a.runtime)}</dd>
      </dl>
      {a.error && (
        <p class="error">
          {clean(a.error.code)}: {clean(a.error.message)}
        </p>
      )}
      <SendTask agent={a} />
    </div>
  );
}

function SendTask({ agent }: { agent: Agent }) {
  const key = useRef(''); // one intent: made when the task is typed, kept across retries
  const [text, setText] = useState('');
  const [receipt, setReceipt] = useState<Receipt | null>(null);
  const [err, setErr] = useState<Failure>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    if (!text.trim()) return;
    setErr(null);
    setBusy(true);
    try {
      if (!key.current) key.current = newKey();
      const { machineId } = await api<StoreList>('GET', '/store/packages?limit=1');
      const r = await api<Receipt>('POST', '/turns', { machineId, agentId: agent.agentId, idempotencyKey: key.current, text: text.trim() });
      setReceipt(r);
      if (r.state !== 'failed') {
        setText('');
        key.current = ''; // the next task is a new intent
      }
    } catch (x) {
      setErr(failure(x));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={submit} data-testid="send-task">
      <label for="task">Task for this agent</label>
      <textarea
        id="task"
        rows={3}
        maxLength={20000}
        value={text}
        onInput={(e) => {
          const v = (e.target as HTMLTextAreaElement).value;
          if (v.trim() !== text.trim()) key.current = ''; // a different task is a new intent
          setText(v);
        }}
      />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy || !text.trim()}>Send the task</button>
      </div>
      <ErrorNote f={err} />
      {receipt && (
        <p data-testid="receipt" data-state={receipt.state}>
          {receipt.duplicate ? 'Already sent' : 'Sent'} ({clean(receipt.state)})
          {receipt.error && ` — ${clean(receipt.error.code)}: ${clean(receipt.error.message)}`}{' '}
          {receipt.missionId && (
            <a href={`/mission/?id=${encodeURIComponent(receipt.missionId)}`} data-testid="receipt-mission">
              Open the mission
            </a>
          )}
        </p>
      )}
    </form>
  );
}
