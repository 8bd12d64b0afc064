//go:build linux

package soak

import (
	"fmt"
	"math/rand/v2"
)

// killKind says where in a process's life the harness kills it.
type killKind string

// The kill points.
const (
	killRandom   killKind = "random"   // a random delay after the process holds the run
	killModel    killKind = "model"    // while a model call is in flight (a delayed turn of the script)
	killShell    killKind = "shell"    // while a slow shell command runs: intent journaled, line not yet appended
	killSandbox  killKind = "sandbox"  // as soon as the slow shell command's bwrap exists (maybe still setting up)
	killLog      killKind = "log"      // right after log.txt grows (a shell append), before its record
	killFile     killKind = "file"     // right after a file is renamed into place (write_file, edit_file)
	killTemp     killKind = "temp"     // right after write_file/edit_file creates its temp file (else as file)
	killCommit   killKind = "commit"   // right after the mission branch moves (git_commit)
	killEffect   killKind = "effect"   // right after the next effect of any kind
	killQuestion killKind = "question" // while a reconcile question is pending, unanswered
	killAnswer   killKind = "answer"   // right after the harness answered a question
)

// kill is one planned kill of one process.
type kill struct {
	Kind killKind
	// Skip: effects (or delayed model turns) to let pass before the one
	// that triggers the kill.
	Skip int
	// Frac: for random, the delay as a fraction of the clean run's length
	// (drawn below 0.8, so that the kill usually lands before the end).
	Frac float64
	// Immediate: for answer, kill as soon as the answer is recorded
	// instead of on the next effect.
	Immediate bool
}

func (k kill) String() string {
	switch k.Kind {
	case killRandom:
		return fmt.Sprintf("random(%.2f)", k.Frac)
	case killAnswer:
		if k.Immediate {
			return "answer(immediate)"
		}
		return "answer(next effect)"
	case killQuestion:
		return "question"
	}
	return fmt.Sprintf("%s(skip %d)", k.Kind, k.Skip)
}

// delayedTurns are the script's turns that answer after a delay.
var delayedTurns = []int{2, 8, 15}

// safePlans are kills at points today's aos handles: a model call in
// flight, and a shell step whose intent is journaled but whose command has
// not run yet (the owner truthfully answers "it did not run — run it", and
// nothing crashes after). The harness must pass with them on main.
func safePlans() [][]kill {
	return [][]kill{{{Kind: killModel, Skip: 1}}, {{Kind: killShell, Skip: 1}}}
}

// fullPlans draws missions whose kills add up to n. The first four chains
// cover every kind, including the two sequences of issue 11's finding 1
// (a kill before a shell append, "run it", a kill right after the re-run's
// append; and a kill after an append, a kill while its question is
// pending, a kill right after the answer); the rest are random.
func fullPlans(rng *rand.Rand, n int) [][]kill {
	templates := [][]kill{
		{{Kind: killShell, Skip: rng.IntN(2)}, {Kind: killAnswer}},
		{{Kind: killLog, Skip: rng.IntN(5)}, {Kind: killQuestion}, {Kind: killAnswer, Immediate: true}},
		{{Kind: killTemp, Skip: rng.IntN(4)}, {Kind: killFile, Skip: rng.IntN(2)}, {Kind: killCommit, Skip: rng.IntN(2)}},
		{{Kind: killRandom, Frac: 0.8 * rng.Float64()}, {Kind: killSandbox, Skip: rng.IntN(2)}},
	}
	kinds := []killKind{killRandom, killModel, killShell, killSandbox, killLog, killFile, killTemp, killCommit, killEffect, killQuestion, killAnswer}
	var plans [][]kill
	for left := n; left > 0; {
		var chain []kill
		if len(plans) < len(templates) {
			chain = templates[len(plans)]
		} else {
			for range 1 + rng.IntN(3) {
				k := kill{Kind: kinds[rng.IntN(len(kinds))], Skip: rng.IntN(3), Frac: 0.8 * rng.Float64(), Immediate: rng.IntN(2) == 0}
				chain = append(chain, k)
			}
		}
		if len(chain) > left {
			chain = chain[:left]
		}
		left -= len(chain)
		plans = append(plans, chain)
	}
	return plans
}

// holding reports whether the kind's trigger starts only once the process
// holds the run: a resumed process first replays the timeline (and today
// waits for the dead holder's lease), and what it prints then is history.
func (k killKind) holding() bool {
	return k == killRandom || k == killModel || k == killShell || k == killSandbox
}
