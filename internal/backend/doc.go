// Package backend runs external coding engines (any command speaking seed
// 004's runtime JSON; later Codex CLI, Claude Code, OpenClaw) as kernel run
// logic, and verifies their work itself before committing it.
//
// A mission's engine runs once, as one journaled non-idempotent step, inside
// aos's sandbox with the mission's worktree as its only writable project
// directory and a private HOME and TMPDIR. It receives
// aios.online-agent.runtime-request.v1 on stdin and must print
// aios.online-agent.runtime-result.v1 on stdout; both are validated
// strictly. aos then ignores the engine's claims: it reads the change with
// hardened host git (gitx, never the worktree's .git file), scans it for
// secrets, re-runs allowlisted verification commands in the sandbox, and
// only then commits on the mission's branch and stores an immutable
// change-set record as a kernel artifact.
//
// Model calls reach the provider only through a per-run metering proxy
// (proxy.go) that holds the real key, charges the mission's budgets and
// cuts the engine off when they are spent.
//
// backend imports kernel, gitx, sandbox, provider and policy; no front end.
package backend
