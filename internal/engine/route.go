package engine

import (
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
)

// Failure classes a route fails over on (hostconfig's selection.failover_on).
const (
	ClassQuota      = "quota"
	ClassServer     = "server"
	ClassConnection = "connection"
)

// BlockerFailureBudgetExhausted is the code of the blocker a run ends
// with when a stage used up its failure budget. aos does not retry it by
// itself; the owner may (aos mission retry).
const BlockerFailureBudgetExhausted = "failure_budget_exhausted"

// BlockerRouteExhausted is the code of the blocker a run ends with when
// every target of its route failed over.
const BlockerRouteExhausted = "route_exhausted"

// Route is the mission's selected route (seed 002 S06/S07), fixed when the
// mission is created: the models to fail over to after Model, in order,
// the failure classes that fail over, and the model stage's failure
// budget.
type Route struct {
	RuleID string `json:"ruleId,omitempty"`
	// Reason and PolicyRevision record why the route was selected and
	// from which selection policy (hostconfig.Decision).
	Reason         string   `json:"reason,omitempty"`
	PolicyRevision string   `json:"policyRevision,omitempty"`
	Fallbacks      []string `json:"fallbacks,omitempty"`
	FailoverOn     []string `json:"failoverOn,omitempty"`
	// FailureBudget is how many failed model calls the run may take
	// before it ends blocked with failure_budget_exhausted; 0 is no limit.
	FailureBudget int `json:"failureBudget,omitempty"`
}

// Hop is one entry of a run's route history: a target left, why, and the
// target taken (empty when none was left, or skipped says why a candidate
// was passed over).
type Hop struct {
	From    string `json:"from"`
	To      string `json:"to,omitempty"`
	Class   string `json:"class,omitempty"`
	Status  int    `json:"status,omitempty"`
	Reason  string `json:"reason"`
	Skipped string `json:"skipped,omitempty"`
}

func (r *Route) validate() string {
	if r == nil {
		return ""
	}
	if len(r.Fallbacks) > 10 {
		return "a route has at most 10 fallbacks"
	}
	for _, f := range r.Fallbacks {
		if strings.TrimSpace(f) == "" || len(f) > 200 {
			return "a route's fallbacks must be model ids"
		}
	}
	for _, c := range r.FailoverOn {
		switch c {
		case ClassQuota, ClassServer, ClassConnection:
		default:
			return "failover classes are quota, server and connection"
		}
	}
	if r.FailureBudget < 0 {
		return "the failure budget must not be negative"
	}
	return ""
}

// classOf is a failed model call's failure class: quota for 429/529 and
// the providers' rate-limit, overload and quota codes, server for another
// 5xx, connection for no response.
func classOf(f *modelFailure) string {
	switch {
	case f.MissingKey != "":
		return ""
	case f.Status == 429 || f.Status == 529, strings.Contains(f.Code, "rate_limit"), strings.Contains(f.Code, "overloaded"),
		strings.Contains(f.Code, "quota"):
		return ClassQuota
	case f.Status >= 500:
		return ClassServer
	case f.Status == 0 && f.Retryable:
		return ClassConnection
	}
	return ""
}

func (r *Route) failsOver(class string) bool {
	if r == nil || class == "" {
		return false
	}
	for _, c := range r.FailoverOn {
		if c == class {
			return true
		}
	}
	return false
}

// failover moves the loop to the next unused target of its route after f.
// A candidate served by another provider is skipped: the transcript is in
// the current provider's format. It reports false when no target is left.
// It depends only on journaled results and the route, so a replay takes
// the same hops.
func (l *loop) failover(f *modelFailure) bool {
	class := classOf(f)
	for _, t := range l.in.Route.Fallbacks {
		if l.used[t] {
			continue
		}
		l.used[t] = true
		a, err := l.d.Adapter(t)
		switch {
		case err != nil:
			l.hops = append(l.hops, Hop{From: l.model, Class: class, Status: f.Status, Reason: f.Message, Skipped: t + ": " + err.Error()})
			continue
		case a.ID() != l.a.ID():
			l.hops = append(l.hops, Hop{From: l.model, Class: class, Status: f.Status, Reason: f.Message,
				Skipped: fmt.Sprintf("%s: served by %s, the conversation is in %s's format", t, a.ID(), l.a.ID())})
			continue
		}
		l.hops = append(l.hops, Hop{From: l.model, To: t, Class: class, Status: f.Status, Reason: f.Message})
		l.model, l.a = t, a
		return true
	}
	l.hops = append(l.hops, Hop{From: l.model, Class: class, Status: f.Status, Reason: f.Message, Skipped: "no unused target left"})
	return false
}

// blocked ends the run blocked by its route: the failure budget is used
// up, or no target is left. The outcome carries the blocker's code and the
// route history.
func (l *loop) blocked(f *modelFailure) (kernel.Result, bool, error) {
	var why string
	if f.Blocker == BlockerFailureBudgetExhausted {
		why = fmt.Sprintf("%s: the model stage failed %d times, its failure budget (not retried automatically).", f.Blocker, l.failures)
	} else {
		why = f.Blocker + ": every target of the route failed."
	}
	path := []string{l.in.Model}
	for _, h := range l.hops {
		if h.To != "" {
			path = append(path, h.To)
		}
	}
	l.blocker = f.Blocker
	return l.end(kernel.StatusBlocked, why+" Route: "+strings.Join(path, " → ")+". Last failure: "+f.Message, nil, nil)
}
