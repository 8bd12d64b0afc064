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
	killLog      killKind = "log"      // right after log.txt grows (a shell append), before its record
	killFile     killKind = "file"     // right after a file is renamed into place (write_file, edit_file)
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
	// Frac: for random, the delay as a fraction of the clean run's length.
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

// safePlans is one mission killed once while a model call is in flight:
// a point aos handles today, so the harness must pass with it.
func safePlans() [][]kill {
	return [][]kill{{{Kind: killModel, Skip: 1}}}
}

// fullPlans draws missions whose kills add up to n. The first four chains
// cover every kind, including the sequence of issue 11's finding 1 (a kill
// on a shell append, a kill while its question is pending, then a kill
// right after the answer); the rest are random.
func fullPlans(rng *rand.Rand, n int) [][]kill {
	templates := [][]kill{
		{{Kind: killLog, Skip: rng.IntN(5)}, {Kind: killQuestion}, {Kind: killAnswer}},
		{{Kind: killFile, Skip: rng.IntN(4)}, {Kind: killCommit, Skip: rng.IntN(2)}},
		{{Kind: killRandom, Frac: rng.Float64()}, {Kind: killModel}, {Kind: killRandom, Frac: rng.Float64()}},
		{{Kind: killEffect, Skip: rng.IntN(8)}, {Kind: killAnswer, Immediate: true}},
	}
	kinds := []killKind{killRandom, killModel, killLog, killFile, killCommit, killEffect, killQuestion, killAnswer}
	var plans [][]kill
	for left := n; left > 0; {
		var chain []kill
		if len(plans) < len(templates) {
			chain = templates[len(plans)]
		} else {
			for range 1 + rng.IntN(3) {
				k := kill{Kind: kinds[rng.IntN(len(kinds))], Skip: rng.IntN(3), Frac: rng.Float64(), Immediate: rng.IntN(2) == 0}
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
