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
// Each command also gets resource limits (a cgroup per command where one
// can be made, rlimits set by prlimit inside), its own network namespace
// (NetworkOpen: outbound NAT by slirp4netns, never the host's loopback),
// empty read-only tmpfs over the owner's homes and over other runs' dirs,
// and dies with the aos process that started it. After each command the
// run's disk use is checked against its quota (Outcome.DiskQuota).
//
// A Warm (Sandbox.NewWarm) runs one run's commands in one long-lived
// sandbox set up from the same plan, started by an init inside it
// (InitMain); ProbeCache keeps the probe's passing verdict for short-lived
// commands.
//
// docs/SANDBOX.md describes the exact bwrap flags, the seccomp rules and
// what is and is not promised.
//
// This package must not import any other aos package.
package sandbox
