// The live-text ordering gate, as the CLI's watch has it
// (internal/cli/livegate.go). A model call's text arrives as transient
// model.delta events, by a faster path than the persisted events: the next
// turn's text could arrive while the previous turn's tool calls are still
// on their way, and a delta can arrive after the step.completed that
// carries the whole text. The gate holds a turn's deltas until the
// step.started of that turn's model call has been seen (the agent loop
// announces its model calls live only: a transient step.started, after
// live copies of the events the previous turn has not committed yet),
// passes them while the call runs, and drops them once its step.completed
// (or step.failed) has been seen. A page that joined during a call (the
// turn after the last ended one it was seeded with, before any model call
// started since) passes that call's deltas at once. Deltas it never places (more than MAX_HELD) are dropped: the
// step's result shows the text instead.
import type { AosEvent, Step } from './api';

const MAX_HELD = 4096;

export class DeltaGate {
  private open = new Set<string>(); // run/turn: model call started, not ended
  private ended = new Set<string>(); // run/turn: model call ended
  private bySeq = new Map<string, string>(); // run/seq of a model call → run/turn
  private held = new Map<string, AosEvent[]>(); // run/turn → deltas waiting
  private nHeld = 0;
  private startedSeen = new Set<string>(); // runs with a model call started since the seed
  private lastEnded = new Map<string, number>(); // run → the last turn whose call the seed found ended
  private joined = new Map<string, string>(); // run → the turn it was running when the page joined

  /** seed records the model calls already journaled (read over REST). A
   * (re)seed also lets the call running now join: its live step.started
   * may have been sent while the page was not subscribed. */
  seed(steps: Step[]) {
    this.startedSeen.clear();
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
        this.lastEnded.set(s.runId, Math.max(this.lastEnded.get(s.runId) ?? -1, s.request.turn));
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
      if (!this.startedSeen.has(e.runId) && turn === (this.lastEnded.get(e.runId) ?? -1) + 1) {
        // The call that ran when the page was seeded (the turn after the
        // last one it found ended): its step.started (live only) came
        // before the page subscribed.
        this.open.add(key);
        this.joined.set(e.runId, key);
        return [e];
      }
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
      this.startedSeen.add(e.runId);
      this.open.add(key);
      this.bySeq.set(seqKey, key);
      this.ended.delete(key); // a retry of the turn's call streams again
      const out = [e, ...(this.held.get(key) ?? [])];
      this.drop(key);
      return out;
    }
    const key = this.bySeq.get(seqKey) ?? this.joined.get(e.runId);
    this.joined.delete(e.runId);
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
