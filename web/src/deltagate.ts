// The live-text ordering gate, as the CLI's watch has it
// (internal/cli/deltagate.go). A model call's text arrives as transient
// model.delta events, by a faster path than the persisted events: the next
// turn's text could arrive while the previous turn's tool calls are still
// on their way, and a delta can arrive after the step.completed that
// carries the whole text. The gate holds a turn's deltas until the
// persisted step.started of that turn's model call has been seen, passes
// them while the call runs, and drops them once its step.completed (or
// step.failed) has been seen. Deltas it never places (a turn it joined
// late, or more than MAX_HELD) are dropped: the step's result shows the
// text instead.
import type { AosEvent, Step } from './api';

const MAX_HELD = 4096;

export class DeltaGate {
  private open = new Set<string>(); // run/turn: model call started, not ended
  private ended = new Set<string>(); // run/turn: model call ended
  private bySeq = new Map<string, string>(); // run/seq of a model call → run/turn
  private held = new Map<string, AosEvent[]>(); // run/turn → deltas waiting
  private nHeld = 0;

  /** seed records the model calls already journaled (read over REST). */
  seed(steps: Step[]) {
    for (const s of steps) {
      if (s.kind !== 'model_call' || typeof s.request?.turn !== 'number') continue;
      const key = `${s.runId}/${s.request.turn}`;
      if (s.status === 'started') {
        this.open.add(key);
        this.bySeq.set(`${s.runId}/${s.seq}`, key);
      } else {
        this.open.delete(key);
        this.ended.add(key);
        this.drop(key);
      }
    }
  }

  /** admit returns the events to apply now, in order, for e: none (a
   * held or late delta), e, or e followed by the deltas it releases. */
  admit(e: AosEvent): AosEvent[] {
    if (e.kind === 'model.delta') {
      const turn = e.payload?.turn;
      if (typeof turn !== 'number') return [e];
      const key = `${e.runId}/${turn}`;
      if (this.open.has(key)) return [e];
      if (this.ended.has(key) || this.nHeld >= MAX_HELD) return [];
      const h = this.held.get(key) ?? [];
      h.push(e);
      this.held.set(key, h);
      this.nHeld++;
      return [];
    }
    if (e.kind !== 'step.started' && e.kind !== 'step.completed' && e.kind !== 'step.failed') return [e];
    const p = e.payload ?? {};
    if (p.kind !== 'model_call') return [e];
    const seqKey = `${e.runId}/${e.seq ?? p.seq}`;
    if (e.kind === 'step.started') {
      if (typeof p.request?.turn !== 'number') return [e];
      const key = `${e.runId}/${p.request.turn}`;
      this.open.add(key);
      this.bySeq.set(seqKey, key);
      this.ended.delete(key); // a retry of the turn's call streams again
      const out = [e, ...(this.held.get(key) ?? [])];
      this.drop(key);
      return out;
    }
    const key = this.bySeq.get(seqKey);
    if (key) {
      this.open.delete(key);
      this.bySeq.delete(seqKey);
      this.ended.add(key);
      this.drop(key);
    }
    return [e];
  }

  private drop(key: string) {
    this.nHeld -= this.held.get(key)?.length ?? 0;
    this.held.delete(key);
  }
}
