package worker

import (
	"context"
	"errors"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/tool"
)

// ModelObserver sees every model call a worker makes (metrics). It is
// told the provider, the model, the outcome ("ok", "error" or
// "cancelled"), the call's wall time and the tokens it used; never a
// prompt or an output.
type ModelObserver interface {
	ModelCall(providerID, model, outcome string, d time.Duration, u provider.Usage)
}

// CommandObserver sees every sandboxed command (metrics): its outcome
// ("ok", "failed", "timeout", "killed" or "error") and wall time; never
// the command line or its output.
type CommandObserver interface {
	SandboxCommand(outcome string, d time.Duration)
}

// observed is an adapter whose calls are reported to an observer.
type observed struct {
	provider.Adapter
	obs ModelObserver
}

// Call implements provider.Adapter.
func (o observed) Call(ctx context.Context, req provider.Request) (*provider.Response, error) {
	t0 := time.Now()
	resp, err := o.Adapter.Call(ctx, req)
	var u provider.Usage
	outcome := "ok"
	switch {
	case err == nil:
		u = resp.Usage
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		outcome = "cancelled"
	default:
		outcome = "error"
	}
	o.obs.ModelCall(string(o.Adapter.ID()), req.Model, outcome, time.Since(t0), u)
	return resp, err
}

// CheckModel passes the check through to the adapter, when it has one.
func (o observed) CheckModel(ctx context.Context, model string) error {
	if c, ok := o.Adapter.(provider.ModelChecker); ok {
		return c.CheckModel(ctx, model)
	}
	return nil
}

// ObserveCommands returns r with every command reported to obs; r itself
// when obs or r is nil.
func ObserveCommands(r tool.Runner, obs CommandObserver) tool.Runner {
	if r == nil || obs == nil {
		return r
	}
	return observedRunner{r: r, obs: obs}
}

type observedRunner struct {
	r   tool.Runner
	obs CommandObserver
}

// Run implements tool.Runner.
func (o observedRunner) Run(ctx context.Context, spec sandbox.Spec) (sandbox.Outcome, error) {
	t0 := time.Now()
	out, err := o.r.Run(ctx, spec)
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "error"
	case out.TimedOut:
		outcome = "timeout"
	case out.Cancelled || out.OutputExceeded || out.Signal != "":
		outcome = "killed"
	case out.ExitCode != 0:
		outcome = "failed"
	}
	o.obs.SandboxCommand(outcome, time.Since(t0))
	return out, err
}
