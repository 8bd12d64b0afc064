package mission

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/aos-run/aos/internal/wire"
	"strings"

	"github.com/aos-run/aos/internal/policy"
	"github.com/aos-run/aos/internal/store"
)

// Rule is wire.Rule, its JSON form on the API.
type Rule = wire.Rule

// AddRuleRequest is wire.AddRuleRequest, its JSON form on the API.
type AddRuleRequest = wire.AddRuleRequest

// ListRules returns the global rules and, when projectID is set, that
// project's, oldest first.
func (s *Service) ListRules(ctx context.Context, projectID string) ([]Rule, error) {
	rs, err := s.st.ListPolicyRules(ctx, projectID)
	if err != nil {
		return nil, translate("list rules", err)
	}
	out := make([]Rule, 0, len(rs))
	for _, r := range rs {
		out = append(out, Rule{ID: r.ID, ProjectID: r.ProjectID, Tool: r.Tool, CommandPrefix: r.CommandPrefix, Decision: r.Decision, Note: r.Note, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// AddRule validates and stores a rule.
func (s *Service) AddRule(ctx context.Context, actor Actor, r AddRuleRequest) (Rule, error) {
	switch {
	case !validName(r.Tool):
		return Rule{}, invalid("tool must be a tool name (letters, digits, _ . -)")
	case !policy.Decision(r.Decision).Valid():
		return Rule{}, invalid("decision must be allow, ask or deny")
	case r.CommandPrefix != "" && r.Tool != "shell":
		return Rule{}, invalid("commandPrefix applies only to the shell tool")
	case len(r.CommandPrefix) > 200 || strings.ContainsAny(r.CommandPrefix, "\n\r\x00"):
		return Rule{}, invalid("commandPrefix must be one line of at most 200 bytes")
	case len(r.Note) > 500, len(r.ProjectID) > 200:
		return Rule{}, invalid("note or projectId too long")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	rule := store.PolicyRule{ID: "rule_" + hex.EncodeToString(b[:]), ProjectID: r.ProjectID, Tool: r.Tool, CommandPrefix: r.CommandPrefix,
		Decision: r.Decision, Note: r.Note, CreatedAt: s.now().UnixMilli()}
	if err := s.st.InsertPolicyRule(ctx, rule); err != nil {
		return Rule{}, translate("add rule", err)
	}
	s.audit(ctx, actor, "policy.add", rule.ID, map[string]any{"tool": r.Tool, "decision": r.Decision, "projectId": r.ProjectID})
	return Rule{ID: rule.ID, ProjectID: rule.ProjectID, Tool: rule.Tool, CommandPrefix: rule.CommandPrefix, Decision: rule.Decision, Note: rule.Note, CreatedAt: rule.CreatedAt}, nil
}

// DeleteRule removes a rule.
func (s *Service) DeleteRule(ctx context.Context, actor Actor, id string) error {
	if err := s.st.DeletePolicyRule(ctx, id); err != nil {
		return translate("delete rule", err)
	}
	s.audit(ctx, actor, "policy.delete", id, nil)
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
