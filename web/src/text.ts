// Untrusted text (anything a model or a tool wrote) is only ever rendered
// as a text node. clean() also makes it inert for the eye: ANSI escape
// sequences are removed and other control characters (except newline and
// tab) are dropped, so no terminal trick reaches the page.

// CSI, OSC (ended by BEL or ST), and lone two-byte escapes.
const ansi = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]|\u009b[0-?]*[ -/]*[@-~]/g;
// C0 and C1 controls other than \t and \n, and bidi overrides.
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** clean strips ANSI escapes and control characters from untrusted text. */
export function clean(s: unknown): string {
  const t = typeof s === 'string' ? s : s === undefined || s === null ? '' : JSON.stringify(s, null, 2);
  return t.replace(/\r\n/g, '\n').replace(ansi, '').replace(controls, '');
}

/** usd formats dollars for people: $0.0123 below a cent, $1.23 above. */
export function usd(n: number | undefined | null): string {
  const v = n ?? 0;
  if (v !== 0 && Math.abs(v) < 0.01) return '$' + v.toFixed(4);
  return '$' + v.toFixed(2);
}

/** ago says how long ago a Unix-millisecond time was. */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}
