// Package control is aos's local control socket (seed 002, S11): one Unix
// socket per data dir, owned by the `aos server` that `aos up` runs, that
// accepts only peers of the daemon's effective uid (SO_PEERCRED) and
// speaks length-prefixed JSON LocalControlEnvelope frames. Every mutation
// goes through internal/mission.Service and carries a command_id whose
// result is kept durably (internal/hoststate), so a repeat returns the
// original result and mutates nothing. Events carry a per-daemon
// event_sequence and replay from a cursor, or say replay_unavailable with
// the snapshot marker to recover from.
//
// It holds the server and the client. It imports mission and hoststate,
// never cli, api or the store.
package control
