// Missions: the list (filter by status) and the create dialog.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Mission, type Model, type Project } from '../api';
import { useLive } from '../live';
import { navigate } from '../router';
import { clean, usd, ago } from '../text';

const FILTERS = ['all', 'active', 'done', 'partial', 'failed', 'cancelled'];

export function Missions({ create = false }: { create?: boolean }) {
  const [filter, setFilter] = useState('all');
  const [open, setOpen] = useState(create);
  useEffect(() => {
    if (create) setOpen(true);
  }, [create]);
  const list = useLive<Mission[]>('/missions', (e) => e.kind.startsWith('run.') && e.kind !== 'run.usage');
  const shown = (list.data ?? []).filter((m) =>
    filter === 'all' ? true : filter === 'active' ? ['queued', 'running', 'waiting'].includes(m.status) : m.status === filter,
  );
  return (
    <section>
      <div class="row">
        <h1>Missions</h1>
        <span class="spacer" />
        <button class="primary" onClick={() => setOpen(true)}>New mission</button>
      </div>
      <div class="row" role="group" aria-label="Filter by status">
        <label class="sr-only" for="filter">Status</label>
        <select id="filter" value={filter} onChange={(e) => setFilter((e.target as HTMLSelectElement).value)}>
          {FILTERS.map((f) => (
            <option value={f}>{f}</option>
          ))}
        </select>
      </div>
      {list.error && <p class="error">{list.error}</p>}
      {list.data && shown.length === 0 && <p class="empty">No missions here.</p>}
      <ul class="list">
        {shown.map((m) => (
          <li key={m.id} class="card">
            <a class="item" href={`/mission/?id=${encodeURIComponent(m.id)}`}>
              <div class="row">
                <strong>{clean(m.title || m.spec?.objective)}</strong>
                <span class={`status ${m.status}`}>{m.status}</span>
              </div>
              <span class="meta">
                {usd(m.spentUsd)} · {clean(m.model ?? '')} · {ago(m.createdAt)}
              </span>
            </a>
          </li>
        ))}
      </ul>
      {open && <CreateDialog onClose={() => setOpen(false)} />}
    </section>
  );
}

function CreateDialog({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [projects, setProjects] = useState<Project[]>([]);
  const [models, setModels] = useState<Model[]>([]);
  const [projectId, setProjectId] = useState('');
  const [objective, setObjective] = useState('');
  const [criteria, setCriteria] = useState('');
  const [model, setModel] = useState('');
  const [pick, setPick] = useState('');
  const [defaultModel, setDefaultModel] = useState('');
  const [budget, setBudget] = useState('1');
  const [effort, setEffort] = useState('');
  const [network, setNetwork] = useState(false);
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    ref.current?.showModal();
    api<Project[]>('GET', '/projects').then((ps) => {
      setProjects(ps);
      if (ps.length) setProjectId(ps[0].id);
    }, (x) => setErr((x as Error).message));
    api<Model[]>('GET', '/models').then(setModels, () => {});
    api<{ defaultModel: string | null; defaultBudgetUsd: number | null }>('GET', '/settings').then((s) => {
      if (s.defaultModel) setDefaultModel(s.defaultModel);
      if (s.defaultBudgetUsd) setBudget(String(s.defaultBudgetUsd));
    }, () => {});
  }, []);

  const byProvider = new Map<string, Model[]>();
  for (const m of models) byProvider.set(m.provider, [...(byProvider.get(m.provider) ?? []), m]);

  async function submit(e: Event) {
    e.preventDefault();
    setErr('');
    const b = Number(budget);
    if (!(b > 0)) return setErr('The budget must be a positive number of dollars.');
    setBusy(true);
    try {
      const body: Record<string, unknown> = {
        objective: objective.trim(),
        criteria: criteria.split('\n').map((c) => c.trim()).filter(Boolean),
        budgetUsd: b,
        network: network ? 'open' : 'none',
      };
      if (projectId) body.projectId = projectId;
      const chosen = pick === 'other' ? model.trim() : pick;
      if (chosen) body.model = chosen;
      if (effort) body.effort = effort;
      const m = await api<Mission>('POST', '/missions', body);
      ref.current?.close();
      navigate(`/mission/?id=${encodeURIComponent(m.id)}`);
    } catch (x) {
      setErr((x as Error).message);
      setBusy(false);
    }
  }

  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="create-title">
      <form onSubmit={submit}>
        <h2 id="create-title">New mission</h2>
        <label for="project">Project</label>
        <select id="project" value={projectId} onChange={(e) => setProjectId((e.target as HTMLSelectElement).value)}>
          {projects.length === 0 && <option value="">No project yet (add one with `aos project add`)</option>}
          {projects.map((p) => (
            <option value={p.id}>{clean(p.name)}</option>
          ))}
        </select>
        <label for="objective">Objective</label>
        <textarea id="objective" required value={objective} onInput={(e) => setObjective((e.target as HTMLTextAreaElement).value)} />
        <label for="criteria">Done criteria (optional, one per line)</label>
        <textarea id="criteria" value={criteria} onInput={(e) => setCriteria((e.target as HTMLTextAreaElement).value)} />
        <label for="model-pick">Model</label>
        <select id="model-pick" value={pick} onChange={(e) => setPick((e.target as HTMLSelectElement).value)}>
          <option value="">The default model{defaultModel ? ` (${clean(defaultModel)})` : ''}</option>
          {[...byProvider].map(([prov, ms]) => (
            <optgroup label={clean(prov)}>
              {ms.map((m) => (
                <option value={m.id} disabled={m.available === false}>
                  {`${clean(m.label || m.id)} · ${usd(m.price?.input)} in / ${usd(m.price?.output)} out per Mtok${m.available === false ? ' · unavailable' : m.available === null ? ' · no key' : ''}`}
                </option>
              ))}
            </optgroup>
          ))}
          <option value="other">Another model id…</option>
        </select>
        {pick === 'other' && (
          <>
            <label for="model">Model id</label>
            <input id="model" required placeholder="e.g. a local model, or script:NAME" value={model} onInput={(e) => setModel((e.target as HTMLInputElement).value)} />
          </>
        )}
        <p class="hint">From the catalogue and each provider's live list, by provider; prices in USD per million tokens.</p>
        <div class="row">
          <div>
            <label for="budget">Budget (USD)</label>
            <input id="budget" type="number" min="0.01" step="0.01" required value={budget} onInput={(e) => setBudget((e.target as HTMLInputElement).value)} />
          </div>
          <div>
            <label for="effort">Effort</label>
            <select id="effort" value={effort} onChange={(e) => setEffort((e.target as HTMLSelectElement).value)}>
              <option value="">default</option>
              <option value="low">low</option>
              <option value="medium">medium</option>
              <option value="high">high</option>
            </select>
          </div>
        </div>
        <label class="check-row">
          <input type="checkbox" class="check" checked={network} onChange={(e) => setNetwork((e.target as HTMLInputElement).checked)} />
          <span>Let the agent's commands use the network</span>
        </label>
        <p class="hint">Risk: with the network on, code the agent runs can reach the internet and send out anything in its workspace.</p>
        {err && <p class="error" role="alert">{err}</p>}
        <div class="actions">
          <button type="button" onClick={() => ref.current?.close()}>Cancel</button>
          <button class="primary" type="submit" disabled={busy}>Start the mission</button>
        </div>
      </form>
    </dialog>
  );
}
