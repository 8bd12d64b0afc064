// The command palette (Ctrl+K or ⌘K, or "/" outside a text field): jump
// to a page or a recent mission by typing a few letters.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Mission } from '../api';
import { navigate } from '../router';
import { clean } from '../text';

interface Cmd {
  label: string;
  hint: string;
  to: string;
}

const PAGES: Cmd[] = [
  { label: 'Home', hint: 'page', to: '/home/' },
  { label: 'Missions', hint: 'page', to: '/missions/' },
  { label: 'New mission', hint: 'action', to: '/missions/?new=1' },
  { label: 'Approvals', hint: 'page', to: '/approvals/' },
  { label: 'Projects', hint: 'page', to: '/projects/' },
  { label: 'Policy', hint: 'page', to: '/policy/' },
  { label: 'Spend', hint: 'page', to: '/spend/' },
  { label: 'System', hint: 'page', to: '/system/' },
  { label: 'Settings', hint: 'page', to: '/settings/' },
];

export function Palette() {
  const ref = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [q, setQ] = useState('');
  const [sel, setSel] = useState(0);
  const [missions, setMissions] = useState<Cmd[]>([]);

  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      const typing = t?.closest?.('input, textarea, select, [contenteditable]');
      if (((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') || (e.key === '/' && !typing)) {
        e.preventDefault();
        setOpen(true);
      }
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, []);
  useEffect(() => {
    if (!open) return;
    setQ('');
    setSel(0);
    ref.current?.showModal();
    api<Mission[]>('GET', '/missions?limit=20').then(
      (ms) => setMissions(ms.map((m) => ({ label: clean(m.title || m.spec?.objective), hint: m.status, to: `/mission/?id=${encodeURIComponent(m.id)}` }))),
      () => {},
    );
  }, [open]);

  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const items = [...PAGES, ...missions].filter((c) => words.every((w) => c.label.toLowerCase().includes(w))).slice(0, 12);
  function go(c: Cmd | undefined) {
    if (!c) return;
    ref.current?.close();
    navigate(c.to);
  }
  if (!open) return null;
  return (
    <dialog ref={ref} class="palette" aria-label="Command palette" onClose={() => setOpen(false)}>
      <label class="sr-only" for="palette-q">Go to</label>
      <input
        id="palette-q"
        placeholder="Go to a page or a mission…"
        autocomplete="off"
        value={q}
        onInput={(e) => {
          setQ((e.target as HTMLInputElement).value);
          setSel(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') setSel((s) => Math.min(items.length - 1, s + 1));
          else if (e.key === 'ArrowUp') setSel((s) => Math.max(0, s - 1));
          else if (e.key === 'Enter') go(items[sel]);
          else return;
          e.preventDefault();
        }}
      />
      <ul class="list" role="listbox" aria-label="Results">
        {items.map((c, i) => (
          <li role="option" aria-selected={i === sel}>
            <button class={i === sel ? 'pick sel' : 'pick'} onClick={() => go(c)}>
              <span>{c.label}</span> <span class="meta">{c.hint}</span>
            </button>
          </li>
        ))}
      </ul>
    </dialog>
  );
}
