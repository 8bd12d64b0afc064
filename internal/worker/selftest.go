package worker

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/kernel"
)

// SelfTestLogic names the built-in logic that exercises the kernel: a few
// journaled steps of different effects, a clock reading, a UUID, a durable
// sleep and a persisted event. `aos selftest` runs it.
const SelfTestLogic = "aos.selftest"

// SelfTest is the self-test run logic.
func SelfTest(rc kernel.RunContext) (kernel.Result, error) {
	start, err := rc.Now()
	if err != nil {
		return kernel.Result{}, err
	}
	id, err := rc.UUID()
	if err != nil {
		return kernel.Result{}, err
	}
	sum := 0
	for i := 1; i <= 3; i++ {
		res, err := rc.Step(kernel.StepSpec{Kind: "selftest", Name: fmt.Sprintf("add-%d", i), Effect: kernel.EffectPure, Request: map[string]int{"add": i}},
			func(ctx context.Context, key string) (kernel.Outcome, error) {
				return kernel.Outcome{Result: i * i}, nil
			})
		if err != nil {
			return kernel.Result{}, err
		}
		var v int
		_, _ = fmt.Sscan(string(res), &v)
		sum += v
	}
	if err := rc.Sleep(200); err != nil {
		return kernel.Result{}, err
	}
	end, err := rc.Now()
	if err != nil {
		return kernel.Result{}, err
	}
	if err := rc.Emit("selftest.finished", map[string]any{"sum": sum, "uuid": id}); err != nil {
		return kernel.Result{}, err
	}
	return kernel.Result{Status: kernel.StatusDone, Summary: fmt.Sprintf("sum of squares 1..3 = %d; durable sleep took %d ms", sum, end-start)}, nil
}
