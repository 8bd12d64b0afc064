package hostconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// EnginePrefix marks an engine target in a rule: "engine:NAME".
const EnginePrefix = "engine:"

// Target is one target of a route: a model, or an external engine.
type Target struct {
	Kind string `json:"kind"` // model or engine
	Name string `json:"name"`
}

// SelectRequest is what selection looks at.
type SelectRequest struct {
	// Model is the model the mission's request named, or "".
	Model string
	// ProjectID is the mission's project id, or "".
	ProjectID string
	// Fallback is the model to ask for when neither the request nor the
	// configuration names one (the owner's default_model setting).
	Fallback string
}

// Decision is a selection: the rule that matched (if any), why, and the
// ordered targets with the failover policy. It has no side effect.
type Decision struct {
	Revision string `json:"revision"`
	// PolicyRevision is derived from everything the decision used.
	PolicyRevision string   `json:"policyRevision"`
	Requested      string   `json:"requested"`
	RuleID         string   `json:"ruleId,omitempty"`
	Reason         string   `json:"reason"`
	Targets        []Target `json:"targets"`
	FailoverOn     []string `json:"failoverOn"`
	// FailureBudgets are the failures each stage may take; 0 is none.
	FailureBudgets map[string]int `json:"failureBudgets,omitempty"`
}

// Models returns the model targets, in order.
func (d Decision) Models() []string {
	var out []string
	for _, t := range d.Targets {
		if t.Kind == "model" {
			out = append(out, t.Name)
		}
	}
	return out
}

// Select runs the ordered selection rules for a mission. The requested
// model is the request's, else defaults.model, else req.Fallback; aliases
// are resolved. The first rule whose conditions hold gives the route; an
// explicitly requested model always stays first (an explicit request
// beats configuration). Without a matching rule the route is the
// requested model alone. Failover is on quota failures unless
// selection.failover_on says otherwise.
func (e Effective) Select(req SelectRequest) Decision {
	requested, from := req.Model, "the request"
	if requested == "" && e.Defaults.Model != nil {
		requested, from = *e.Defaults.Model, "defaults.model"
	}
	if requested == "" {
		requested, from = req.Fallback, "the default_model setting"
	}
	requested = e.alias(requested)
	d := Decision{Revision: e.Revision, Requested: requested, FailoverOn: []string{ClassQuota}, FailureBudgets: e.Selection.FailureBudgets}
	if e.Selection.FailoverOn != nil {
		d.FailoverOn = e.Selection.FailoverOn
	}
	for _, r := range e.Selection.Rules {
		if r.When.Model != "" && e.alias(r.When.Model) != requested || r.When.Project != "" && r.When.Project != req.ProjectID {
			continue
		}
		d.RuleID = r.ID
		d.Reason = "rule " + r.ID + " matched " + requested + " (from " + from + ")"
		if req.Model != "" {
			d.Targets = append(d.Targets, Target{Kind: "model", Name: requested})
		}
		for _, t := range r.Targets {
			d.Targets = appendTarget(d.Targets, e.target(t))
		}
		break
	}
	if d.RuleID == "" {
		d.Reason = "no rule matched; the requested model (from " + from + ")"
		if requested != "" {
			d.Targets = []Target{{Kind: "model", Name: requested}}
		}
	}
	b, _ := json.Marshal(d)
	sum := sha256.Sum256(b)
	d.PolicyRevision = hex.EncodeToString(sum[:])[:32]
	return d
}

func (e Effective) alias(m string) string {
	if a, ok := e.Aliases[m]; ok {
		return a
	}
	return m
}

func (e Effective) target(s string) Target {
	if name, ok := strings.CutPrefix(s, EnginePrefix); ok {
		return Target{Kind: "engine", Name: name}
	}
	return Target{Kind: "model", Name: e.alias(s)}
}

// appendTarget appends t unless the route has it already.
func appendTarget(ts []Target, t Target) []Target {
	for _, x := range ts {
		if x == t {
			return ts
		}
	}
	return append(ts, t)
}
