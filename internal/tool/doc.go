// Package tool defines the agent's tools as typed, self-describing values:
// each has an input struct, a strict JSON schema (OpenAI strict mode
// compatible), its effect and risk, whether it is parallel-safe, Run, and
// optionally Reconcile and an approval description.
//
// Errors the model should read are a Result with OK false; Go errors are
// for system failures (for example a sandbox that cannot be set up).
// Every file tool opens paths beneath the workspace with kernel-enforced
// containment (wsfs.go: os.Root for reads, an O_NOFOLLOW openat walk for
// writes), refuses non-regular files, and refuses protected paths (see
// Protected) for writes, whatever the policy says. ResolvePath only
// checks a name, for tools that hand paths to git.
//
// This package must not import internal/kernel, internal/store or
// internal/engine; the engine adapts it. It may import internal/sandbox.
package tool
