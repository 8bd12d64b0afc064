package tool

import (
	"context"
	"encoding/json"

	"github.com/aos-run/aos/internal/sandbox"
)

// def is the shared shape of a typed tool whose input struct is I. Each
// tool file fills one in; def implements Tool around it.
type def[I validator] struct {
	name, description string
	schema            json.RawMessage
	effect            func(I) Effect
	risk              func(I, sandbox.Network) Risk
	parallelSafe      bool
	run               func(ctx context.Context, tc *Context, in I) (Result, error)
	approval          func(in I) Approval
}

// Name implements Tool.
func (d *def[I]) Name() string { return d.name }

// Description implements Tool.
func (d *def[I]) Description() string { return d.description }

// Schema implements Tool.
func (d *def[I]) Schema() json.RawMessage { return d.schema }

// ParallelSafe implements Tool.
func (d *def[I]) ParallelSafe() bool { return d.parallelSafe }

// Validate implements Tool.
func (d *def[I]) Validate(input json.RawMessage) error {
	_, err := parse[I](d.name, input)
	return err
}

// Effect implements Tool.
func (d *def[I]) Effect(input json.RawMessage) Effect {
	in, _ := decode[I](d.name, input)
	return d.effect(in)
}

// Risk implements Tool.
func (d *def[I]) Risk(input json.RawMessage, n sandbox.Network) Risk {
	in, _ := decode[I](d.name, input)
	return d.risk(in, n)
}

// Run implements Tool.
func (d *def[I]) Run(ctx context.Context, tc *Context, input json.RawMessage) (Result, error) {
	in, err := parse[I](d.name, input)
	if err != nil {
		return fail("%v", err), nil
	}
	return d.run(ctx, tc, in)
}

// DescribeForApproval implements Tool.
func (d *def[I]) DescribeForApproval(input json.RawMessage) Approval {
	in, _ := decode[I](d.name, input)
	return d.approval(in)
}

// reconcilable is a def that also implements Reconciler.
type reconcilable[I validator] struct {
	*def[I]
	reconcile func(ctx context.Context, tc *Context, in I) (Reconciliation, error)
}

// Reconcile implements Reconciler.
func (r reconcilable[I]) Reconcile(ctx context.Context, tc *Context, input json.RawMessage) (Reconciliation, error) {
	in, err := parse[I](r.name, input)
	if err != nil {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	return r.reconcile(ctx, tc, in)
}

func always[I any](e Effect) func(I) Effect { return func(I) Effect { return e } }
func riskAlways[I any](r Risk) func(I, sandbox.Network) Risk {
	return func(I, sandbox.Network) Risk { return r }
}
