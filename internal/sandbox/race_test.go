//go:build linux && race

package sandbox_test

// raceEnabled: the race detector's shadow memory counts against
// RLIMIT_DATA, so a race-instrumented test binary cannot start under a
// small memory limit.
const raceEnabled = true
