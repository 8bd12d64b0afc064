// Package sandbox confines the agent's shell commands on Linux with
// bubblewrap (bwrap) plus a seccomp filter that aos generates itself.
//
// The sandbox fails closed: a Sandbox admits no command until its canary
// probe (see Probe) has observed, from inside a real sandbox, that writes
// outside the writable roots, reads of protected paths, metadata changes,
// network access under NetworkNone, unix-socket connects, capabilities and
// stray environment variables are all refused. If bwrap is missing or any
// check fails, Run returns an *UnavailableError and never runs the command
// unsandboxed or with weaker confinement.
//
// docs/SANDBOX.md describes the exact bwrap flags, the seccomp rules and
// what is and is not promised.
//
// This package must not import any other aos package.
package sandbox
