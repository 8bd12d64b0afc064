// Package engine is aos's built-in agent loop (seed 001 §5, §10) as kernel
// run logic: each turn is a journaled model_call step, each tool execution a
// tool_call step, each owner decision a durable wait. The transcript and
// every piece of loop state are rebuilt from step results on every claim;
// nothing else is state.
//
// The engine imports kernel, provider, tool and policy, and no front end.
package engine
