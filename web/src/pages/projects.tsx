// Projects: the registered git projects, and adding one (init a new
// repository, register an existing one, or clone).
import { useEffect, useState } from 'preact/hooks';
import { api, type Project } from '../api';
import { clean } from '../text';

export function ProjectsPage() {
  const [list, setList] = useState<Project[] | null>(null);
  const [name, setName] = useState('');
  const [path, setPath] = useState('');
  const [mode, setMode] = useState('init');
  const [url, setUrl] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const load = () => api<Project[]>('GET', '/projects').then(setList, (x) => setErr((x as Error).message));
  useEffect(() => void load(), []);
  async function add(e: Event) {
    e.preventDefault();
    setErr('');
    setBusy(true);
    try {
      const body: Record<string, string> = { name: name.trim(), path: path.trim(), mode };
      if (mode === 'clone') body.url = url.trim();
      await api('POST', '/projects', body);
      setName('');
      setPath('');
      setUrl('');
      await load();
    } catch (x) {
      setErr((x as Error).message);
    } finally {
      setBusy(false);
    }
  }
  async function remove(p: Project) {
    if (!confirm(`Unregister ${p.name}? Its directory stays.`)) return;
    try {
      await api('DELETE', `/projects/${encodeURIComponent(p.id)}`);
      await load();
    } catch (x) {
      setErr((x as Error).message);
    }
  }
  return (
    <section>
      <h1>Projects</h1>
      {list && list.length === 0 && <p class="empty">No project yet.</p>}
      <ul class="list" data-testid="projects">
        {list?.map((p) => (
          <li class="card row">
            <div>
              <strong>{clean(p.name)}</strong>
              <div class="meta mono">{clean(p.dir)}</div>
            </div>
            <span class="spacer" />
            <button class="small" onClick={() => remove(p)}>Unregister</button>
          </li>
        ))}
      </ul>
      <h2>Add a project</h2>
      <form class="card" onSubmit={add}>
        <label for="pname">Name</label>
        <input id="pname" required maxLength={100} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <label for="pmode">How</label>
        <select id="pmode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
          <option value="init">A new repository (git init)</option>
          <option value="existing">An existing git work tree</option>
          <option value="clone">Clone from a URL</option>
        </select>
        <label for="ppath">Directory, relative to the workspace root</label>
        <input id="ppath" required value={path} onInput={(e) => setPath((e.target as HTMLInputElement).value)} />
        {mode === 'clone' && (
          <>
            <label for="purl">Repository URL (https:// or ssh)</label>
            <input id="purl" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
          </>
        )}
        {err && <p class="error" role="alert">{err}</p>}
        <div class="actions">
          <button class="primary" type="submit" disabled={busy}>Add the project</button>
        </div>
      </form>
    </section>
  );
}
