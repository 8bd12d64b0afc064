// Browser notifications for new approvals and questions while the console
// is open (no push service: nothing leaves this server). The text is the
// wait's title, as plain text.
import type { AosEvent } from './api';
import { subscribe } from './events';
import { clean } from './text';

/** notificationsAvailable reports whether the browser can show them. */
export function notificationsAvailable(): boolean {
  return 'Notification' in window;
}

/** startNotifications shows one notification per new wait, once permitted. */
export function startNotifications(): () => void {
  return subscribe((e: AosEvent) => {
    if (e.kind !== 'wait.created' || !notificationsAvailable() || Notification.permission !== 'granted') return;
    const p = e.payload ?? {};
    const q = p.kind === 'question';
    const body = clean(q ? p.payload?.text : p.payload?.title).slice(0, 200);
    try {
      const n = new Notification(q ? 'Agent OS: a question for you' : 'Agent OS: approval needed', { body, tag: String(p.waitId ?? e.id) });
      n.onclick = () => {
        window.focus();
        location.assign(`/mission/?id=${encodeURIComponent(e.missionId)}`);
      };
    } catch {
      /* some browsers allow notifications only from a service worker */
    }
  });
}
