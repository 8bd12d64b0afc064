// Hooks that load state over REST and keep it fresh from the shared socket.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type AosEvent } from './api';
import { RESYNC, subscribe } from './events';

/**
 * useLive loads path and reloads it (coalesced) whenever an event for
 * which refetch(e) is true arrives, or after a resync.
 */
export function useLive<T>(path: string, refetch: (e: AosEvent) => boolean, onEvent?: (e: AosEvent, set: (f: (v: T | undefined) => T | undefined) => void) => void) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState('');
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => {
    let alive = true;
    const load = () =>
      api<T>('GET', path)
        .then((d) => {
          if (alive) {
            setData(d);
            setError('');
          }
        })
        .catch((x) => alive && setError((x as Error).message));
    void load();
    const off = subscribe((e) => {
      onEvent?.(e, setData);
      if (e.kind === RESYNC || refetch(e)) {
        clearTimeout(timer.current);
        timer.current = window.setTimeout(load, 150);
      }
    });
    return () => {
      alive = false;
      off();
      clearTimeout(timer.current);
    };
  }, [path]);
  return { data, error };
}
