// One shared events WebSocket for the whole console, with cursor resume:
// the id of the last persisted event seen is kept in memory, and a
// reconnect asks for everything after it, so nothing is missed or seen
// twice. A "gap" notice (more than the server replays) tells listeners to
// refetch what they show.
import type { AosEvent } from './api';

export type Conn = 'connecting' | 'open' | 'reconnecting' | 'offline' | 'expired';
type Listener = (e: AosEvent) => void;

const listeners = new Set<Listener>();
const connListeners = new Set<(c: Conn) => void>();
let ws: WebSocket | null = null;
let cursor = -1; // -1: no persisted event seen yet
let state: Conn = 'connecting';
let retry = 0;
let timer: number | undefined;
let stopped = true;

function setState(c: Conn) {
  state = c;
  connListeners.forEach((f) => f(c));
}

/** connState returns the socket's state. */
export function connState(): Conn {
  return state;
}

/** onConn registers a listener of the socket's state; returns its remover. */
export function onConn(f: (c: Conn) => void): () => void {
  connListeners.add(f);
  return () => connListeners.delete(f);
}

/** subscribe registers an event listener; returns its remover. */
export function subscribe(f: Listener): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}

/** lastEventId is the cursor a reconnect resumes from. */
export function lastEventId(): number {
  return cursor;
}

/** startEvents opens the socket once the owner is signed in. */
export function startEvents() {
  if (!stopped) return;
  stopped = false;
  connect();
}

/** stopEvents closes the socket (logout). */
export function stopEvents() {
  stopped = true;
  clearTimeout(timer);
  ws?.close(1000);
  ws = null;
  cursor = -1;
  state = 'connecting';
}

function emit(e: AosEvent) {
  listeners.forEach((f) => f(e));
}

/** RESYNC is the kind of the console's own event that tells pages to refetch. */
export const RESYNC = 'console.resync';

function resync(): AosEvent {
  return { id: -1, missionId: '', runId: '', seq: null, kind: RESYNC, payload: {}, createdAt: Date.now() };
}

function connect() {
  if (stopped) return;
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  // Without a cursor the server starts live from its newest event; the
  // pages loaded their state over REST before, and refetch on "resync".
  const resume = cursor >= 0;
  const q = resume ? `?cursor=${cursor}` : '';
  const sock = new WebSocket(`${proto}//${location.host}/api/v1/events${q}`, ['aos.v1']);
  ws = sock;
  sock.onopen = () => {
    const again = state !== 'connecting';
    retry = 0;
    setState('open');
    // A reconnect that could not resume from a cursor may have missed
    // events: every page refetches.
    if (again && !resume) emit(resync());
  };
  sock.onmessage = (m) => {
    let e: AosEvent;
    try {
      e = JSON.parse(String(m.data));
    } catch {
      return;
    }
    if (e.id > 0) {
      if (e.id <= cursor) return; // already seen
      cursor = e.id;
    }
    if (e.kind === 'system.notice' && e.payload?.code === 'gap' && typeof e.payload.latestId === 'number') {
      // The server replays at most 5,000 events: jump to the newest and
      // let every page refetch.
      cursor = Math.max(cursor, e.payload.latestId);
      emit(resync());
    }
    if (e.kind === 'system.notice' && e.payload?.code === 'auth.expired') {
      setState('expired');
      stopped = true;
    }
    emit(e);
  };
  sock.onclose = (c) => {
    if (ws !== sock) return;
    ws = null;
    if (stopped || c.code === 4401) {
      if (c.code === 4401) setState('expired');
      return;
    }
    setState(navigator.onLine === false ? 'offline' : 'reconnecting');
    const delay = Math.min(10000, 250 * 2 ** retry++);
    timer = window.setTimeout(connect, delay);
  };
}

window.addEventListener('online', () => {
  if (!stopped && !ws) {
    clearTimeout(timer);
    connect();
  }
});
