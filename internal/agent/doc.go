// Package agent is the service behind seed 000's Store and agent
// preparation: packages as data (official ones embedded, community ones
// reviewed by the owner), the installed index and doctor readiness,
// durable idempotent preparation operations, agents bound to a registered
// project, and turns that become missions.
//
// Every front end (CLI, owner API, the paired device channel) calls
// Service; none re-implements its checks. The wire types in wire.go keep
// the seed's exact JSON field names.
//
// It imports mission, store and gitx; it must not import api, cli or
// console.
package agent
