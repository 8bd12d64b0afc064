// A windowed list for long timelines: with more than WINDOW_FROM items,
// only the rows near the viewport are in the DOM, between two spacers
// that stand for the rest. The page itself scrolls (no inner scroll box,
// so phones scroll as usual). Row heights vary (a tool call expands): each
// rendered row is measured, and watched by one ResizeObserver; rows never
// rendered count ESTIMATE pixels. No dependency: prefix sums and a binary
// search over them.
import { cloneElement, type VNode } from 'preact';
import { useLayoutEffect, useEffect, useRef, useState } from 'preact/hooks';

export const WINDOW_FROM = 150;
const ESTIMATE = 56; // px, a collapsed row
const OVERSCAN = 1000; // px rendered above and below the viewport
const MARGIN = 300; // px: re-render only when the viewport comes this close to the rendered edge

/** Row is one item: node renders an <li> (an element, or a component
 * that spreads the props it does not know onto its <li>). */
export interface Row {
  key: string;
  node: VNode<any>;
}

export function VirtualList({ rows, class: cls, testid }: { rows: Row[]; class: string; testid: string }) {
  const ref = useRef<HTMLOListElement>(null);
  const heights = useRef(new Map<string, number>());
  const [, setTick] = useState(0);
  // The rendered span (px from the list's top): the viewport and OVERSCAN
  // around it, moved only when the viewport nears one of its edges, so a
  // scroll re-renders the list every few hundred pixels, not every frame.
  const [span, setSpan] = useState({ top: 0, bottom: (typeof window === 'undefined' ? 1000 : window.innerHeight) + OVERSCAN });
  const windowed = rows.length > WINDOW_FROM;

  // The viewport, relative to the list's top, on scroll and resize (one
  // update per animation frame).
  useEffect(() => {
    if (!windowed) return;
    let frame = 0;
    const update = () => {
      frame = 0;
      const el = ref.current;
      if (!el) return;
      const top = -el.getBoundingClientRect().top;
      const bottom = top + window.innerHeight;
      setSpan((v) =>
        (v.top <= 0 || top - MARGIN >= v.top) && bottom + MARGIN <= v.bottom ? v : { top: Math.max(0, top - OVERSCAN), bottom: bottom + OVERSCAN },
      );
    };
    const on = () => {
      if (!frame) frame = requestAnimationFrame(update);
    };
    update();
    window.addEventListener('scroll', on, { passive: true });
    window.addEventListener('resize', on);
    return () => {
      window.removeEventListener('scroll', on);
      window.removeEventListener('resize', on);
      cancelAnimationFrame(frame);
    };
  }, [windowed]);

  // Measure the rendered rows, now and whenever one changes size. Each
  // row is observed once (observing fires a first callback); rows gone
  // from the DOM are let go.
  const observer = useRef<ResizeObserver | null>(null);
  const observed = useRef(new Set<Element>());
  useLayoutEffect(() => {
    if (!windowed) return;
    const measure = (els: Iterable<Element>) => {
      let changed = false;
      for (const el of els) {
        const k = (el as HTMLElement).dataset.vkey;
        if (!k || !el.isConnected) continue;
        const h = (el as HTMLElement).offsetHeight;
        if (h > 0 && heights.current.get(k) !== h) {
          heights.current.set(k, h);
          changed = true;
        }
      }
      if (changed) setTick((t) => t + 1);
    };
    observer.current ??= new ResizeObserver((es) => measure(es.map((e) => e.target)));
    for (const el of observed.current) {
      if (!el.isConnected) {
        observer.current.unobserve(el);
        observed.current.delete(el);
      }
    }
    for (const el of ref.current?.querySelectorAll('[data-vkey]') ?? []) {
      if (!observed.current.has(el)) {
        observed.current.add(el);
        observer.current.observe(el);
      }
    }
  });
  useEffect(() => () => observer.current?.disconnect(), []);

  if (!windowed) {
    return (
      <ol ref={ref} class={cls} data-testid={testid} data-rows={rows.length}>
        {rows.map((r) => cloneElement(r.node, { key: r.key }))}
      </ol>
    );
  }
  // Prefix sums of the heights; the first and last rows in view (with
  // overscan), by binary search.
  const n = rows.length;
  const offs = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) offs[i + 1] = offs[i] + (heights.current.get(rows[i].key) ?? ESTIMATE);
  const find = (y: number) => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offs[mid + 1] <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const first = find(span.top);
  const last = Math.min(n, find(span.bottom) + 1);
  return (
    <ol ref={ref} class={`${cls} windowed`} data-testid={testid} data-rows={n}>
      <li class="vspacer" aria-hidden="true" style={{ height: `${offs[first]}px` }} />
      {rows.slice(first, last).map((r, i) => cloneElement(r.node, { key: r.key, 'data-vkey': r.key, 'aria-setsize': n, 'aria-posinset': first + i + 1 }))}
      <li class="vspacer" aria-hidden="true" style={{ height: `${offs[n] - offs[last]}px` }} />
    </ol>
  );
}
