// Package hoststate keeps aos's durable host records in the data dir
// (seed 002, S09): a versioned JSON envelope with a monotonic CAS revision
// and a SHA-256 over schema/revision/state, written by temp file, fsync,
// atomic rename and directory fsync under an advisory lock that every
// instance shares; and the device singleton lease of `aos up`, held with an
// immutable fencing token and renewed by CAS by a supervisor.
//
// A corrupt, malformed or future-schema file is a typed *Error and is never
// reset or overwritten: it stays on disk as evidence.
//
// It uses the standard library only and imports nothing of aos.
package hoststate
