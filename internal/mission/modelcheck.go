package mission

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/registry"
)

// AdapterFunc builds the model adapter that serves a model id.
type AdapterFunc func(model string) (provider.Adapter, error)

// DefaultModelCheckTimeout bounds the model check at mission creation; a
// local endpoint's probe may have to wait for the model to load.
const DefaultModelCheckTimeout = 60 * time.Second

// checkModel refuses a model that cannot run a mission: no provider
// serves it, it cannot call tools, a scripted model would go to a real
// provider, or the local endpoint is not configured or does not answer.
// Adapters without a check pass. It is the same check on every front end
// (the API, aos run, aos demo); Options.Adapter, when set, builds the
// adapter instead of the provider registry.
func (s *Service) checkModel(ctx context.Context, model string) error {
	id, ok := registry.ProviderFor(model)
	if !ok {
		return invalid("no provider serves model %q: use a catalogue model (aos models), script:NAME or local:NAME", model)
	}
	var a provider.Adapter
	var base string
	var err error
	switch {
	case s.opts.Adapter != nil:
		a, err = s.opts.Adapter(model)
		if err != nil && !errors.Is(err, provider.ErrNoLocalEndpoint) {
			return invalid("model %s cannot run a mission: %v", model, err)
		}
	case id == provider.Compat:
		a, base, err = s.localAdapter(ctx, provider.RetryPolicy{MaxAttempts: 1}, false)
	default:
		a, err = registry.New(id, provider.Config{Getenv: s.opts.Getenv})
	}
	if errors.Is(err, provider.ErrNoLocalEndpoint) {
		return &Error{Code: CodeModelUnavailable, Msg: err.Error(), Err: err}
	}
	var me *Error
	if errors.As(err, &me) {
		return err
	}
	if err != nil {
		return fmt.Errorf("mission: check model %s: %w", model, err)
	}
	c, ok := a.(provider.ModelChecker)
	if !ok {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.ModelCheckTimeout)
	defer cancel()
	err = c.CheckModel(cctx, model)
	var se *provider.ScriptedModelError
	switch {
	case err == nil:
		return nil
	case id == provider.Compat && cctx.Err() != nil && ctx.Err() == nil:
		// The endpoint answers but the probe is slow: a local server may be
		// loading a large model on first use. The mission is created and
		// its first turn tells.
		s.opts.Logger.Warn("local model check timed out; the mission is created unchecked", "model", model, "endpoint", redactURL(base))
		return nil
	case errors.Is(err, provider.ErrToolsUnsupported):
		return &Error{Code: CodeInvalidInput, Msg: fmt.Sprintf("model %s cannot call tools, which every mission needs", model), Err: err}
	case errors.Is(err, provider.ErrUnknownModel):
		return &Error{Code: CodeInvalidInput, Msg: fmt.Sprintf("model %s is not known to its provider (aos models lists them)", model), Err: err}
	case errors.As(err, &se):
		return &Error{Code: CodeInvalidInput, Msg: se.Error(), Err: err}
	case id == provider.Compat:
		return &Error{Code: CodeModelUnavailable, Msg: fmt.Sprintf("model %s: the local endpoint %s did not answer: %s", model, redactURL(base), shortErr(err)), Err: err}
	}
	return &Error{Code: CodeModelUnavailable, Msg: fmt.Sprintf("model %s could not be checked: %s", model, shortErr(err)), Err: err}
}
