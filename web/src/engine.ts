// An external engine's work in the timeline (docs/ENGINES.md), one line
// per event as the CLI's watch prints it (internal/cli/enginecmds.go,
// engineLine): the persisted engine.started / engine.finished /
// verify.command / verify.refused / changeset.recorded (journaled as emit
// steps) and the live-only engine.event (the engine's turns, tool calls,
// file changes) and engine.model_call (the metering proxy). Everything
// here was written by the engine or its model: it goes through clean()
// and is rendered as a text node, never as HTML or a link.
import { clean } from './text';

/** ENGINE_KINDS are the event kinds engineLine renders. */
export const ENGINE_KINDS = new Set(['engine.started', 'engine.finished', 'verify.command', 'verify.refused', 'changeset.recorded', 'engine.event', 'engine.model_call']);

function line(v: unknown, max: number): string {
  const s = clean(v).replace(/\s+/g, ' ').trim();
  return s.length > max ? s.slice(0, max) + '…' : s;
}

function list(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => clean(x)) : [];
}

function num(v: unknown): number {
  return typeof v === 'number' && isFinite(v) ? v : 0;
}

/** EngineLine is a rendered row: its text and whether it reports a failure. */
export interface EngineLine {
  text: string;
  bad: boolean;
}

/** engineLine renders an engine event's payload as one line of plain
 * text, or null for a kind or type it does not show. */
export function engineLine(kind: string, p: any): EngineLine | null {
  p = p && typeof p === 'object' ? p : {};
  const eng = line(p.engine, 200);
  switch (kind) {
    case 'engine.started':
      return { text: `▶ engine ${eng} on ${line(p.branch, 80)} (base ${line(p.base, 12).slice(0, 12)})`, bad: false };
    case 'engine.finished': {
      const sp = p.spend && typeof p.spend === 'object' ? p.spend : {};
      const status = line(p.status, 40);
      return { text: `◀ engine ${status}: ${line(p.summary, 200)} (${num(sp.calls)} model calls, $${num(sp.usd).toFixed(4)})`, bad: status !== 'COMPLETED' };
    }
    case 'verify.command': {
      const what = p.ran ? `exit ${num(p.exitCode)}` : `refused: ${line(p.rule, 120)}`;
      return { text: `✓? ${line(list(p.argv).join(' '), 120)} — ${what}`, bad: !p.ran || p.passed === false };
    }
    case 'verify.refused':
      return { text: `✗ refused: ${line(p.reason, 300)}`, bad: true };
    case 'changeset.recorded':
      return { text: `▣ change set ${line(p.sha256, 12).slice(0, 12)} (commit ${line(p.commit, 12).slice(0, 12)})`, bad: false };
    case 'engine.model_call':
      return { text: `$ ${eng} model call ${num(p.calls)} ($${num(p.usd).toFixed(4)} so far)`, bad: false };
    case 'engine.event':
      switch (p.type) {
        case 'tool_call': {
          const exit = typeof p.exitCode === 'number' ? ` (exit ${p.exitCode})` : '';
          return { text: `→ ${eng} ${line(p.tool, 60)} ${line(p.input, 160)}${exit}`, bad: typeof p.exitCode === 'number' && p.exitCode !== 0 };
        }
        case 'file_change':
          return { text: `✎ ${eng} ${line(list(p.changes).join(', '), 200)}`, bad: false };
        case 'tool_summary': {
          const n = num(p.calls);
          return { text: `⚙ ${eng} made ${n} ${n === 1 ? 'tool call' : 'tool calls'}: ${line(list(p.tools).join(', '), 200)}`, bad: false };
        }
        case 'text':
          return { text: `${eng}: ${line(p.text, 200)}`, bad: false };
      }
  }
  return null;
}
