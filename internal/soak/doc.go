// Package soak is the crash soak of the real aos binary (issue 11): it
// builds cmd/aos, runs a scripted 18-turn mission with `aos run`, kills it
// with SIGKILL at random moments, at effect boundaries (seen with inotify on
// the workspace), while a reconcile question is pending and right after it
// is answered, resumes it with `aos resume`, answers every question
// truthfully, and compares the result with an uninterrupted run: every
// side-effect line exactly once, the same commits and trees, the same
// tool-call sequence, status done, no debris.
//
// The package has tests only; see soak_test.go for the knobs
// (AOS_SOAK, AOS_SOAK_KILLS, AOS_SOAK_SEED, AOS_SOAK_BREAK) and
// docs/SOAK.md for what it does and how to read a failure.
package soak
