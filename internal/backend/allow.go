package backend

import (
	"strings"

	"github.com/aos-run/aos/internal/policy"
)

// Allowlist decides which verification commands aos re-runs. A command is
// allowed when its argv starts with the words of an allow prefix (from the
// owner's policy allow rules for the shell, or the project config's
// verifyAllow) and no deny rule's prefix matches it. Rules without a
// prefix allow nothing here: a blanket shell allow is not a verification
// allowlist.
type Allowlist struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny,omitempty"`
}

// NewAllowlist builds an allowlist from policy rules and config prefixes.
func NewAllowlist(rules []policy.Rule, configAllow []string) Allowlist {
	var a Allowlist
	for _, r := range rules {
		if (r.Tool != "shell" && r.Tool != "*") || strings.TrimSpace(r.CommandPrefix) == "" {
			continue
		}
		switch r.Decision {
		case policy.Allow:
			a.Allow = append(a.Allow, r.CommandPrefix)
		case policy.Deny:
			a.Deny = append(a.Deny, r.CommandPrefix)
		}
	}
	for _, p := range configAllow {
		if strings.TrimSpace(p) != "" {
			a.Allow = append(a.Allow, p)
		}
	}
	return a
}

// Allows reports whether argv may be re-run, and the prefix that decided.
func (a Allowlist) Allows(argv []string) (bool, string) {
	for _, d := range a.Deny {
		if argvHasPrefix(argv, d) {
			return false, "denied by rule " + d
		}
	}
	for _, p := range a.Allow {
		if argvHasPrefix(argv, p) {
			return true, p
		}
	}
	return false, "not on the verification allowlist"
}

func argvHasPrefix(argv []string, prefix string) bool {
	words := strings.Fields(prefix)
	if len(words) == 0 || len(words) > len(argv) {
		return false
	}
	for i, w := range words {
		if argv[i] != w {
			return false
		}
	}
	return true
}
