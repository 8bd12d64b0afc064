// One mission: header (status, spend against budget, criteria), its run
// tree, the live timeline of the selected run (the root by default; REST
// steps merged with events by seq; model text streamed from model.delta
// through the ordering gate, deltagate.ts), windowed past a few hundred
// rows (components/vlist.tsx), pending waits inline, a composer for
// steering messages, cancel and retry. An external engine's work shows
// as one line per event (engine.ts): the journaled engine.* emits, and the
// live-only engine.event / engine.model_call placed after the step that
// was newest when they arrived. Every string a model, a tool or an engine
// wrote goes through clean() into a text node.
import { Component } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, type AosEvent, type Mission, type Run, type Step, type Wait } from '../api';
import { RunTree } from '../components/runtree';
import { VirtualList, type Row } from '../components/vlist';
import { Diff, WaitCard } from '../components/wait';
import { DeltaGate } from '../deltagate';
import { ENGINE_KINDS, engineLine } from '../engine';
import { RESYNC, subscribe } from '../events';
import { navigate } from '../router';
import { clean } from '../text';
import { BudgetBar } from './home';

const ENDED = new Set(['done', 'partial', 'blocked', 'failed', 'budget_exhausted', 'cancelled']);
const HIDDEN = new Set(['setup', 'policy', 'now', 'uuid']);
// Engine-side tools: they journal no tool_call step (a wait or a notice instead).
const CONTROL = new Set(['finish', 'ask_owner', 'update_criteria', 'propose_criteria']);

/** consumed lists the ids of steering messages the run has read. */
function consumed(steps: Step[]): Set<number> {
  const ids = new Set<number>();
  for (const s of steps) if (s.kind === 'owner_messages' && Array.isArray(s.result?.messages)) for (const m of s.result.messages) ids.add(Number(m.id));
  return ids;
}

// Live engine rows kept per mission view: the oldest go past this many.
const MAX_ENGINE_ROWS = 1000;

/** EngineRow is a live-only engine event, shown after step `after`. */
interface EngineRow {
  n: number;
  after: number;
  kind: string;
  payload: any;
}

interface Live {
  turn: number;
  text: string;
  thinking: string;
}

async function allSteps(runId: string): Promise<Step[]> {
  const out: Step[] = [];
  let after = -1;
  for (;;) {
    const page = await api<Step[]>('GET', `/runs/${encodeURIComponent(runId)}/steps?after=${after}&limit=500`);
    out.push(...page);
    if (page.length < 500) return out;
    after = page[page.length - 1].seq;
  }
}

/** shown says whether a step has a row in the timeline (StepItem renders
 * nothing for the others). */
function shown(s: Step): boolean {
  if (HIDDEN.has(s.kind)) return false;
  if (s.kind === 'model_call') return s.status !== 'started'; // the streaming item shows it
  if (s.kind === 'emit') return s.name === 'policy.decision' || (ENGINE_KINDS.has(s.name) && engineLine(s.name, s.request) !== null);
  if (s.kind === 'owner_messages') return Array.isArray(s.result?.messages) && s.result.messages.length > 0;
  return true;
}

export function MissionPage({ id }: { id: string }) {
  const [mission, setMission] = useState<Mission | null>(null);
  const [run, setRun] = useState<Run | null>(null);
  const [runs, setRuns] = useState<Run[]>([]);
  const [selected, setSelected] = useState('');
  const [steps, setSteps] = useState<Map<number, Step>>(new Map());
  const [waits, setWaits] = useState<Wait[]>([]);
  const [live, setLive] = useState<Live | null>(null);
  const [messages, setMessages] = useState<{ id: number; text: string }[]>([]);
  const [err, setErr] = useState('');
  const [engine, setEngine] = useState<EngineRow[]>([]);
  const [usage, setUsage] = useState<AosEvent | null>(null);
  const rootRef = useRef('');
  const maxSeq = useRef(-1);
  const callTurn = useRef(new Map<number, number>()); // a model call's seq → its turn

  useEffect(() => {
    let alive = true;
    let timer: number | undefined;
    const gate = new DeltaGate();
    setSteps(new Map());
    setLive(null);
    setEngine([]);
    setUsage(null);
    maxSeq.current = -1;
    let n = 0;
    async function load() {
      try {
        const m = await api<Mission>('GET', `/missions/${encodeURIComponent(id)}`);
        if (!alive) return;
        const runId = selected || m.rootRunId;
        rootRef.current = runId;
        setMission(m);
        const [r, ss, ws, rs] = await Promise.all([
          api<Run>('GET', `/runs/${encodeURIComponent(runId)}`),
          allSteps(runId),
          api<Wait[]>('GET', `/waits?status=pending&missionId=${encodeURIComponent(id)}`),
          api<Run[]>('GET', `/missions/${encodeURIComponent(id)}/runs`),
        ]);
        if (!alive) return;
        gate.seed(ss);
        for (const s of ss) maxSeq.current = Math.max(maxSeq.current, s.seq);
        setRun(r);
        setRuns(rs ?? []);
        setSteps((old) => {
          const next = new Map(old);
          for (const s of ss) {
            // A live copy runs ahead of the database: a step it showed
            // ended stays ended until REST shows it so too.
            const prev = old.get(s.seq);
            if (prev && prev.status !== 'started' && s.status === 'started') continue;
            next.set(s.seq, s);
          }
          return next;
        });
        setWaits(ws);
      } catch (x) {
        if (alive) setErr((x as Error).message);
      }
    }
    const reload = () => {
      clearTimeout(timer);
      timer = window.setTimeout(load, 100);
    };
    const off = subscribe((ev: AosEvent) => {
      if (ev.kind === RESYNC) return reload();
      if (ev.missionId !== id) return;
      for (const e of gate.admit(ev)) apply(e);
    });
    const apply = (e: AosEvent) => {
      const eseq = e.seq ?? (e.kind.startsWith('step.') ? e.payload?.seq : undefined); // a live copy's is in its payload
      if (e.runId === rootRef.current && typeof eseq === 'number') maxSeq.current = Math.max(maxSeq.current, eseq);
      switch (e.kind) {
        case 'engine.event':
          if (e.runId !== rootRef.current || !engineLine(e.kind, e.payload)) break;
          setEngine((rs) => [...rs.slice(-(MAX_ENGINE_ROWS - 1)), { n: n++, after: maxSeq.current, kind: e.kind, payload: e.payload }]);
          break;
        case 'engine.model_call':
          // One line, updated in place: the proxy's running total.
          if (e.runId === rootRef.current) setUsage(e);
          break;
        case 'model.delta':
          if (e.runId !== rootRef.current) break;
          setLive((l) => {
            const p = e.payload ?? {};
            if (p.reset || !l || l.turn !== p.turn) l = { turn: p.turn ?? 0, text: '', thinking: '' };
            if (p.type === 'thinking') return { ...l, thinking: l.thinking + clean(p.text) };
            if (typeof p.text === 'string' && p.type !== 'tool_use' && p.type !== 'input_json') return { ...l, text: l.text + clean(p.text) };
            return l;
          });
          break;
        case 'step.started':
        case 'step.completed':
        case 'step.failed': {
          // A live copy (id -1, kernel LiveAnnounce) has its seq in its
          // payload only; it and its persisted event merge by seq.
          const p = e.payload ?? {};
          const seq = e.seq ?? p.seq;
          if (e.runId !== rootRef.current || typeof seq !== 'number') break;
          // A copy too large to travel live: the persisted event follows.
          if (e.id < 0 && p.truncated) break;
          if (p.kind === 'model_call' && e.kind === 'step.started' && typeof p.request?.turn === 'number') callTurn.current.set(seq, p.request.turn);
          setSteps((old) => {
            const prev = old.get(seq);
            const s: Step = {
              runId: e.runId, seq, kind: p.kind ?? prev?.kind ?? '', name: p.name ?? prev?.name ?? '', effect: p.effect ?? '',
              status: e.kind === 'step.started' ? 'started' : e.kind === 'step.completed' ? 'completed' : 'failed',
              request: p.request ?? prev?.request, result: p.result ?? prev?.result, error: p.error ?? prev?.error,
              costUsd: prev?.costUsd ?? 0, startedAt: prev?.startedAt ?? e.createdAt, truncated: !!p.truncated,
            };
            if (prev && prev.status !== 'started' && s.status === 'started') return old; // a late replay
            const next = new Map(old);
            next.set(s.seq, s);
            return next;
          });
          if (e.kind === 'step.completed' && p.kind === 'model_call') {
            // Only this call's text: a late completion of the previous
            // call (its persisted event after the next call's live text)
            // leaves the next call's alone.
            const t = callTurn.current.get(seq);
            setLive((l) => (l && t !== undefined && l.turn !== t ? l : null));
          }
          if (p.truncated) reload(); // the event left the body out: read it over REST
          break;
        }
        case 'owner.message':
          // Shown as "sent" until the run reads it (an owner_messages step).
          setMessages((ms) => (ms.some((m) => m.id === e.payload?.id) ? ms : [...ms, { id: Number(e.payload?.id), text: clean(e.payload?.text) }]));
          break;
        case 'run.usage':
          if (typeof e.payload?.missionSpentUsd === 'number') setMission((m) => (m ? { ...m, spentUsd: e.payload.missionSpentUsd } : m));
          break;
        default:
          if (e.kind.startsWith('wait.') || e.kind === 'policy.decision' || (e.kind.startsWith('run.') && e.kind !== 'run.usage')) reload();
      }
    };
    void load();
    return () => {
      alive = false;
      off();
      clearTimeout(timer);
    };
  }, [id, selected]);

  // The timeline's order and what it needs, recomputed only when a step
  // changes (not on every streamed delta).
  const ordered = useMemo(() => [...steps.values()].sort((a, b) => a.seq - b.seq), [steps]);
  const read = useMemo(() => consumed(ordered), [ordered]);
  const executed = useMemo(() => new Set(ordered.filter((s) => s.kind === 'tool_call').map((s) => s.request?.callId)), [ordered]);

  if (err) return <p class="error" role="alert">{err}</p>;
  if (!mission) return <p class="empty">Loading…</p>;
  const ended = ENDED.has(mission.status);
  const budget = run?.budget?.usd ?? Number(mission.spec?.budgetUsd ?? 0);
  const after = new Map<number, EngineRow[]>();
  for (const r of engine) after.set(r.after, [...(after.get(r.after) ?? []), r]);
  const engineRows = (seq: number): Row[] => (after.get(seq) ?? []).map((r) => ({ key: `e${r.n}`, node: <EngineItem kind={r.kind} payload={r.payload} /> }));
  const rows: Row[] = engineRows(-1);
  for (const s of ordered) {
    if (shown(s)) rows.push({ key: `s${s.seq}`, node: <StepItem step={s} ended={ended} executed={executed} /> });
    rows.push(...engineRows(s.seq));
  }
  if (usage && !ended) rows.push({ key: 'usage', node: <EngineItem kind={usage.kind} payload={usage.payload} /> });
  for (const m of messages) {
    if (read.has(m.id)) continue;
    rows.push({
      key: `msg-${m.id}`,
      node: (
        <li data-testid="sent-message">
          <div class="who">You · sent</div>
          <div class="text">{m.text}</div>
        </li>
      ),
    });
  }
  if (live && (live.text || live.thinking)) {
    rows.push({
      key: 'live',
      node: (
        <li class="streaming" data-testid="streaming">
          <div class="who">Agent · writing…</div>
          {live.thinking && <p class="meta">{live.thinking}</p>}
          <div class="text">{live.text}</div>
        </li>
      ),
    });
  }
  for (const w of waits) {
    rows.push({
      key: `w-${w.id}`,
      node: (
        <li>
          <WaitCard wait={w} showMission={false} onDone={() => setWaits((ws) => ws.filter((x) => x.id !== w.id))} />
        </li>
      ),
    });
  }

  return (
    <section>
      <header>
        <div class="row">
          <h1>{clean(mission.title || mission.spec?.objective)}</h1>
          <span class={`status ${mission.status}`} data-testid="mission-status">{mission.status}</span>
        </div>
        <BudgetBar spent={mission.spentUsd} budget={budget} />
        {Array.isArray(mission.spec?.criteria) && mission.spec.criteria.length > 0 && (
          <>
            <h2>Done criteria</h2>
            <ul class="criteria">
              {mission.spec.criteria.map((c: unknown) => (
                <li>{clean(c)}</li>
              ))}
            </ul>
          </>
        )}
        {mission.result?.summary && <p class="card">{clean(mission.result.summary)}</p>}
        <div class="actions">
          {!ended && (
            <button class="danger" onClick={() => api('POST', `/missions/${encodeURIComponent(id)}/cancel`).catch((x) => setErr((x as Error).message))}>
              Cancel the mission
            </button>
          )}
          {ended && (
            <button
              onClick={() =>
                api<Mission>('POST', `/missions/${encodeURIComponent(id)}/retry`).then(
                  (m) => navigate(`/mission/?id=${encodeURIComponent(m.id)}`),
                  (x) => setErr((x as Error).message),
                )
              }
            >
              Retry
            </button>
          )}
        </div>
      </header>

      <RunTree runs={runs} root={mission.rootRunId} selected={selected || mission.rootRunId} onSelect={(r) => setSelected(r === mission.rootRunId ? '' : r)} />
      <h2>Timeline{run && run.id !== mission.rootRunId ? ` of run ${run.id.slice(0, 8)}` : ''}</h2>
      <VirtualList rows={rows} class="timeline" testid="timeline" />
      {!ended && <Composer runId={mission.rootRunId} />}
    </section>
  );
}

function Composer({ runId }: { runId: string }) {
  const [text, setText] = useState('');
  const [err, setErr] = useState('');
  return (
    <form
      class="composer"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!text.trim()) return;
        try {
          await api('POST', `/runs/${encodeURIComponent(runId)}/message`, { text: text.trim() });
          setText('');
          setErr('');
        } catch (x) {
          setErr((x as Error).message);
        }
      }}
    >
      <label class="sr-only" for="steer">Message to the agent</label>
      <input id="steer" placeholder="Steer the agent…" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled={!text.trim()}>Send</button>
      {err && <p class="error" role="alert">{err}</p>}
    </form>
  );
}

/** summarizeInput is a tool call's one-line label: its command or path, cut at 120 characters. */
function summarizeInput(input: any): string {
  let s = clean(input);
  if (input && typeof input === 'object') {
    if (typeof input.command === 'string') s = clean(input.command);
    else if (typeof input.path === 'string') s = clean(input.path);
  }
  s = s.replace(/\s+/g, ' ');
  return s.length > 120 ? s.slice(0, 120) + '…' : s;
}

// StepItem renders a step's row unless its props changed (a shallow
// compare): scrolling a long timeline re-renders the window, not the
// steps in it.
class StepItem extends Component<{ step: Step; ended: boolean; executed: Set<unknown> } & Record<string, unknown>> {
  shouldComponentUpdate(next: Record<string, unknown>) {
    const cur = this.props as Record<string, unknown>;
    const keys = Object.keys(next);
    return keys.length !== Object.keys(cur).length || keys.some((k) => k !== 'children' && next[k] !== cur[k]);
  }
  render() {
    const { step, ended, executed, ...li } = this.props;
    return stepRow(step, ended, executed, li);
  }
}

// stepRow renders one step's row; li are the row's own attributes (set
// by the windowed list).
function stepRow(step: Step, ended: boolean, executed: Set<unknown>, li: Record<string, unknown>) {
  const interrupted = step.status === 'started' && ended;
  if (step.kind === 'model_call') {
    if (step.status === 'started') return null; // the streaming item shows it
    const blocks: any[] = Array.isArray(step.result?.blocks) ? step.result.blocks : [];
    return (
      <li {...li} data-testid="turn">
        <div class="who">Agent</div>
        {blocks.map((b) =>
          b.type === 'thinking' ? (
            <details>
              <summary>Reasoning summary</summary>
              <p class="text">{clean(b.text)}</p>
            </details>
          ) : b.type === 'text' ? (
            <div class="text">{clean(b.text)}</div>
          ) : b.type === 'tool_use' && ended && !executed.has(b.id) && !CONTROL.has(b.name) ? (
            <div class="tag bad" data-testid="not-executed">not executed: {clean(b.name)} {summarizeInput(b.input)}</div>
          ) : null,
        )}
        {step.truncated && <div class="tag">(cut at 20,000 characters)</div>}
      </li>
    );
  }
  if (step.kind === 'tool_call') {
    const r = step.result ?? {};
    const name = clean(step.request?.name ?? step.name);
    return (
      <li {...li} data-testid="tool-call">
        <details>
          <summary>
            {name} {summarizeInput(step.request?.input)}{' '}
            <span class={interrupted || r.ok === false || step.status === 'failed' ? 'tag bad' : 'tag'}>
              {interrupted ? 'interrupted' : step.status === 'started' ? 'running…' : step.status === 'failed' ? 'failed' : r.ok === false ? 'error' : 'ok'}
            </span>
          </summary>
          <div class="tag">input</div>
          <pre>{clean(step.request?.input)}</pre>
          {step.status !== 'started' && (
            <>
              <div class="tag">output</div>
              <pre data-testid="tool-output">{clean(r.content ?? step.error)}</pre>
              {r.diff && <Diff text={clean(r.diff)} />}
              {r.artifact?.sha256 && /^[0-9a-f]{64}$/.test(r.artifact.sha256) && (
                <a href={`/api/v1/artifacts/${r.artifact.sha256}?name=${encodeURIComponent(clean(r.artifact.name))}`} download>
                  Download the full output ({clean(r.artifact.name)})
                </a>
              )}
            </>
          )}
          {step.truncated && <div class="tag">(cut at 20,000 characters)</div>}
        </details>
      </li>
    );
  }
  if (step.kind === 'emit') {
    if (ENGINE_KINDS.has(step.name)) return <EngineItem kind={step.name} payload={step.request} {...li} />;
    if (step.name !== 'policy.decision') return null;
    const d = step.request ?? {};
    return (
      <li {...li} data-testid="policy-decision">
        <span class={d.decision === 'deny' ? 'tag bad' : 'tag'}>
          policy: {clean(d.decision)} {clean(d.tool)} ({clean(d.source)}){d.reason ? ` — ${clean(d.reason)}` : ''}
        </span>
      </li>
    );
  }
  if (step.kind === 'wait') {
    const q = step.name === 'question';
    const res = { ...(step.result?.resolution ?? {}) };
    if (step.result?.status === 'expired') res.expired = true;
    return (
      <li {...li}>
        <span class="tag">
          {step.status === 'started'
            ? interrupted
              ? 'interrupted while waiting for the owner'
              : q
                ? 'waiting for your answer'
                : 'waiting for your approval'
            : res.expired
              ? 'the wait expired'
              : q
                ? `you answered: ${clean(res.answer)}`
                : res.approved
                  ? `approved${res.remember ? ' and remembered' : ''}`
                  : `denied${res.reason ? `: ${clean(res.reason)}` : ''}`}
        </span>
      </li>
    );
  }
  if (step.kind === 'owner_messages') {
    const ms: any[] = Array.isArray(step.result?.messages) ? step.result.messages : [];
    if (!ms.length) return null;
    return (
      <li {...li}>
        <div class="who">You</div>
        {ms.map((m) => (
          <div class="text">{clean(m.text)}</div>
        ))}
      </li>
    );
  }
  return (
    <li {...li}>
      <span class="tag">
        {clean(step.kind)} {clean(step.name)} {interrupted ? '(interrupted)' : step.status === 'started' ? '…' : ''}
      </span>
    </li>
  );
}

/** EngineItem is one engine event's row: plain text, no markup from the engine. */
function EngineItem({ kind, payload, ...li }: { kind: string; payload: any } & Record<string, unknown>) {
  const l = engineLine(kind, payload);
  if (!l) return null;
  return (
    <li {...li} data-testid="engine-event" data-kind={kind}>
      <span class={l.bad ? 'tag bad' : 'tag'}>{l.text}</span>
    </li>
  );
}
