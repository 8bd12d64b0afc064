// The store: the package catalog (official and community, with their
// installed / readiness / review state), a package's details, and
// preparing an agent from one in a new workspace (docs/AGENTS.md). The
// preparation's idempotency key is made once per intent (opening the
// form) and kept across retries, so a retried submit answers the same
// operation; the operation is then polled every 2 s until it settles.
// Package texts come from package authors: clean() into text nodes.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, newKey, type Operation, type Package, type PrepareResult, type StoreInspect, type StoreList } from '../api';
import { clean } from '../text';
import { ErrorNote, failure, type Failure } from '../components/errnote';

const SETTLED = new Set(['ready', 'failed', 'needs_user_action']);

function pkgPath(id: string): string {
  return id.split('/').map(encodeURIComponent).join('/');
}

// allPackages reads the catalog page by page (store.list answers at most
// 10 a page), up to 500 packages.
async function allPackages(): Promise<StoreList> {
  const first = await api<StoreList>('GET', '/store/packages?limit=10');
  const packages = [...(first.packages ?? [])];
  for (let off = first.nextOffset; off !== null && packages.length < 500; ) {
    const page = await api<StoreList>('GET', `/store/packages?limit=10&offset=${off}`);
    packages.push(...(page.packages ?? []));
    off = page.nextOffset;
  }
  return { ...first, packages, nextOffset: null };
}

export function StorePage() {
  const [list, setList] = useState<StoreList | null>(null);
  const [open, setOpen] = useState('');
  const [err, setErr] = useState<Failure>(null);
  useEffect(() => {
    allPackages().then(setList, (x) => setErr(failure(x)));
  }, []);
  return (
    <section>
      <h1>Store</h1>
      <ErrorNote f={err} />
      {list && !list.packages?.length && <p class="empty">No package in the catalog.</p>}
      <ul class="list" data-testid="store">
        {list?.packages?.map((p) => (
          <li class="card" data-testid="package" data-package={p.packageId}>
            <div class="row">
              <div>
                <h2 class="pkg">{clean(p.name)}</h2>
                <div class="meta mono">{clean(p.packageId)}</div>
              </div>
              <span class="spacer" />
              <span class={p.verified ? 'tag' : 'tag bad'}>{p.verified ? 'official' : 'community'}</span>
            </div>
            <p>{clean(p.description)}</p>
            <div class="meta" data-testid="package-state">
              {clean(p.installation)} · readiness {clean(p.readiness?.state)}
              {!p.installAllowed && ' · review required (aos package review)'}
              {p.broken && ` · broken: ${clean(p.broken)}`}
            </div>
            <div class="actions">
              <button class="small" aria-expanded={open === p.packageId} onClick={() => setOpen(open === p.packageId ? '' : p.packageId)}>
                {open === p.packageId ? 'Close' : 'Inspect'}
              </button>
            </div>
            {open === p.packageId && list && <Inspect pkg={p} machineId={list.machineId} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Inspect({ pkg, machineId }: { pkg: Package; machineId: string }) {
  const [info, setInfo] = useState<StoreInspect | null>(null);
  const [err, setErr] = useState<Failure>(null);
  useEffect(() => {
    api<StoreInspect>('GET', `/store/packages/${pkgPath(pkg.packageId)}`).then(setInfo, (x) => setErr(failure(x)));
  }, [pkg.packageId]);
  if (err) return <ErrorNote f={err} />;
  if (!info) return <p class="empty">Loading…</p>;
  const p = info.package;
  return (
    <div data-testid="inspect">
      <dl class="kv">
        <dt>Engine</dt>
        <dd>{clean(p.engine)}</dd>
        <dt>Category</dt>
        <dd>{clean(p.category)}</dd>
        <dt>Version</dt>
        <dd>{clean(p.version ?? 'not installed')}</dd>
        {p.requirements?.applications?.length ? (
          <>
            <dt>Needs</dt>
            <dd>{p.requirements.applications.map(clean).join(', ')}</dd>
          </>
        ) : null}
        {p.requirements?.note && (
          <>
            <dt>Note</dt>
            <dd>{clean(p.requirements.note)}</dd>
          </>
        )}
        <dt>Agents</dt>
        <dd>{info.candidates?.length ?? 0}{info.candidatesTruncated ? '+' : ''}</dd>
      </dl>
      {p.readiness?.lines?.length ? <pre>{p.readiness.lines.map(clean).join('\n')}</pre> : null}
      {p.installAllowed ? <Prepare pkg={p} machineId={machineId} /> : <p class="meta">A community package runs only after the owner reviews it: aos package review {clean(p.packageId)}</p>}
    </div>
  );
}

function Prepare({ pkg, machineId }: { pkg: Package; machineId: string }) {
  const key = useRef(newKey()); // one intent: kept across retries
  const [name, setName] = useState('');
  const [op, setOp] = useState<Operation | null>(null);
  const [err, setErr] = useState<Failure>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    // needs_user_action is polled too, more slowly: once the owner fixed
    // what it names (an engine check, a default model), a poll re-checks
    // and the same operation becomes ready.
    if (!op || op.state === 'ready' || op.state === 'failed') return;
    const t = window.setTimeout(
      () => api<Operation>('GET', `/operations/${encodeURIComponent(op.operationId)}`).then(setOp, (x) => setErr(failure(x))),
      op.state === 'needs_user_action' ? 5000 : 2000,
    );
    return () => clearTimeout(t);
  }, [op]);
  async function submit(e: Event) {
    e.preventDefault();
    setErr(null);
    setBusy(true);
    try {
      const ws: { kind: string; name?: string } = { kind: 'new' };
      if (name.trim()) ws.name = name.trim();
      const r = await api<PrepareResult>('POST', '/agents/prepare', { machineId, packageId: pkg.packageId, workspace: ws, idempotencyKey: key.current });
      setOp(r.operation);
    } catch (x) {
      setErr(failure(x)); // a retry sends the same key
    } finally {
      setBusy(false);
    }
  }
  const id = `ws-${pkg.packageId.replace(/[^a-z0-9]/gi, '-')}`;
  return (
    <form onSubmit={submit} data-testid="prepare">
      <label for={id}>New workspace name (optional)</label>
      <input id={id} maxLength={100} value={name} disabled={!!op} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <div class="actions">
        <button class="primary" type="submit" disabled={busy || !!op}>Prepare an agent</button>
      </div>
      <ErrorNote f={err} />
      {op && (
        <div class="card" data-testid="operation" data-state={op.state} aria-live="polite">
          <div>
            <strong>{clean(op.state)}</strong> · {clean(op.phase)}
            {!SETTLED.has(op.state) && ' …'}
          </div>
          {op.error && (
            <p class="error">
              {clean(op.error.code)}: {clean(op.error.message)}
            </p>
          )}
          {op.guidance && <p data-testid="guidance">{clean(op.guidance)}</p>}
          {op.doctor?.length ? <pre>{op.doctor.map(clean).join('\n')}</pre> : null}
          {op.agentId && (
            <a href={`/agents/?id=${encodeURIComponent(op.agentId)}`} data-testid="agent-link">
              Open the agent
            </a>
          )}
        </div>
      )}
    </form>
  );
}
