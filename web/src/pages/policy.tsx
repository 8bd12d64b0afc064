// Policy: the owner's allow / ask / deny rules (global or per project).
import { useEffect, useState } from 'preact/hooks';
import { api, type Project } from '../api';
import { clean } from '../text';

interface Rule {
  id: string;
  projectId?: string;
  tool: string;
  commandPrefix?: string;
  decision: string;
  note?: string;
}

export function PolicyPage() {
  const [rules, setRules] = useState<Rule[] | null>(null);
  const [projects, setProjects] = useState<Project[]>([]);
  const [tool, setTool] = useState('shell');
  const [prefix, setPrefix] = useState('');
  const [decision, setDecision] = useState('ask');
  const [projectId, setProjectId] = useState('');
  const [note, setNote] = useState('');
  const [err, setErr] = useState('');
  const load = () => api<Rule[]>('GET', '/policy/rules').then(setRules, (x) => setErr((x as Error).message));
  useEffect(() => {
    void load();
    api<Project[]>('GET', '/projects').then(setProjects, () => {});
  }, []);
  const pname = (id?: string) => (id ? clean(projects.find((p) => p.id === id)?.name ?? id) : 'every project');
  async function add(e: Event) {
    e.preventDefault();
    setErr('');
    const body: Record<string, string> = { tool: tool.trim(), decision };
    if (prefix.trim()) body.commandPrefix = prefix.trim();
    if (projectId) body.projectId = projectId;
    if (note.trim()) body.note = note.trim();
    try {
      await api('POST', '/policy/rules', body);
      setPrefix('');
      setNote('');
      await load();
    } catch (x) {
      setErr((x as Error).message);
    }
  }
  async function del(r: Rule) {
    try {
      await api('DELETE', `/policy/rules/${encodeURIComponent(r.id)}`);
      await load();
    } catch (x) {
      setErr((x as Error).message);
    }
  }
  return (
    <section>
      <h1>Policy</h1>
      <p class="hint">Hard denies come first, then any deny rule, then ask, then allow, then the defaults by risk.</p>
      {rules && rules.length === 0 && <p class="empty">No rules: the defaults by risk apply.</p>}
      <ul class="list" data-testid="rules">
        {rules?.map((r) => (
          <li class="card row">
            <div>
              <span class={`status ${r.decision === 'deny' ? 'failed' : r.decision === 'allow' ? 'done' : 'waiting'}`}>{clean(r.decision)}</span>{' '}
              <span class="mono">
                {clean(r.tool)}
                {r.commandPrefix ? ` ${clean(r.commandPrefix)}…` : ''}
              </span>
              <div class="meta">
                {pname(r.projectId)}
                {r.note ? ` · ${clean(r.note)}` : ''}
              </div>
            </div>
            <span class="spacer" />
            <button class="small" onClick={() => del(r)} aria-label={`Delete the rule ${r.decision} ${r.tool}`}>Delete</button>
          </li>
        ))}
      </ul>
      <h2>Add a rule</h2>
      <form class="card" onSubmit={add}>
        <div class="row">
          <div>
            <label for="rdecision">Decision</label>
            <select id="rdecision" value={decision} onChange={(e) => setDecision((e.target as HTMLSelectElement).value)}>
              <option value="allow">allow</option>
              <option value="ask">ask</option>
              <option value="deny">deny</option>
            </select>
          </div>
          <div>
            <label for="rtool">Tool</label>
            <input id="rtool" required value={tool} onInput={(e) => setTool((e.target as HTMLInputElement).value)} />
          </div>
        </div>
        {tool.trim() === 'shell' && (
          <>
            <label for="rprefix">Command prefix (optional)</label>
            <input id="rprefix" class="mono" placeholder="go test" value={prefix} onInput={(e) => setPrefix((e.target as HTMLInputElement).value)} />
          </>
        )}
        <label for="rproject">Applies to</label>
        <select id="rproject" value={projectId} onChange={(e) => setProjectId((e.target as HTMLSelectElement).value)}>
          <option value="">every project</option>
          {projects.map((p) => (
            <option value={p.id}>{clean(p.name)}</option>
          ))}
        </select>
        <label for="rnote">Note (optional)</label>
        <input id="rnote" value={note} onInput={(e) => setNote((e.target as HTMLInputElement).value)} />
        {err && <p class="error" role="alert">{err}</p>}
        <div class="actions">
          <button class="primary" type="submit">Add the rule</button>
        </div>
      </form>
    </section>
  );
}
