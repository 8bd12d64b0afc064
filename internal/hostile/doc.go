// Package hostile holds aos's hostile-model suite (issue 10): scripted
// missions whose tool calls attack aos through every tool, run through the
// real `aos run` binary with default policy against the scripted model
// server, and checked from OUTSIDE with canaries planted in the owner's
// HOME, the worker's environment and the data dir.
//
// The suite is its tests (hostile_test.go and the attack table in
// attacks_*_test.go); docs/HOSTILE.md says how to add an attack. This file
// only names the package.
package hostile
