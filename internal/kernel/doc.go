// Package kernel is aos's durable execution engine: runs of registered run
// logic whose every interaction with the world is a journaled step, replayed
// from the journal after a crash, a lost lease or a restart.
//
// A run's logic is a deterministic function of its step results. When a
// worker claims a run it calls the logic from the top; steps with a recorded
// result return it without executing, and execution goes on for real from
// the first step without one. Logic must therefore take time, randomness and
// owner input only through RunContext (Now, UUID, OwnerMessages).
//
// The kernel knows nothing of agents: the engine is one logic among others.
// It must not import internal/engine, provider, tool, policy or any front
// end; internal/layering's test enforces it.
package kernel
