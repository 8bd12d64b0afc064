// A mission's runs as a tree (GET /missions/{id}/runs): the root run and,
// under each run, the runs it started (parentRunId), oldest first. Each
// run shows its status, logic, turns and spend; choosing one shows its
// timeline. A mission with only its root run shows no tree.
import type { Run } from '../api';
import { clean } from '../text';

export function RunTree({ runs, root, selected, onSelect }: { runs: Run[]; root: string; selected: string; onSelect: (id: string) => void }) {
  if (runs.length < 2) return null;
  const ids = new Set(runs.map((r) => r.id));
  const children = new Map<string, Run[]>();
  for (const r of [...runs].sort((a, b) => a.createdAt - b.createdAt)) {
    // A run whose parent is not listed hangs under the root.
    const parent = r.id === root ? '' : r.parentRunId && ids.has(r.parentRunId) ? r.parentRunId : root;
    children.set(parent, [...(children.get(parent) ?? []), r]);
  }
  const seen = new Set<string>();
  const branch = (parent: string): preact.JSX.Element | null => {
    const rs = (children.get(parent) ?? []).filter((r) => !seen.has(r.id));
    if (!rs.length) return null;
    for (const r of rs) seen.add(r.id);
    return (
      <ul>
        {rs.map((r) => (
          <li key={r.id}>
            <button class={r.id === selected ? 'run selected' : 'run'} aria-pressed={r.id === selected} data-testid="run" onClick={() => onSelect(r.id)}>
              <span class={`status ${r.status}`}>{r.status}</span> <span class="mono">{r.id.slice(0, 8)}</span> {clean(r.logic)}
              {r.id === root ? ' (root)' : ''} · {r.turns} turns · ${r.spentUsd.toFixed(2)}
            </button>
            {branch(r.id)}
          </li>
        ))}
      </ul>
    );
  };
  return (
    <nav class="runtree" aria-label="Runs" data-testid="run-tree">
      <h2>Runs</h2>
      {branch('')}
    </nav>
  );
}
