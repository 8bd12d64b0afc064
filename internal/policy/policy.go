// Package policy decides, for each tool call the model makes, whether aos
// allows it, asks the owner, or denies it (seed 001 §6, §10). It is pure:
// the engine gathers the facts (the call, its risk, the owner's rules) and
// journals the decision; policy never runs anything.
//
// Decision order:
//  1. hard denies: protected paths, a tool outside the contract's allowlist,
//     a network tool while the network is "none", and every non-read tool
//     while the done criteria are not confirmed;
//  2. any matching deny rule, project or global (a global deny beats a
//     project allow);
//  3. any matching ask rule;
//  4. any matching allow rule;
//  5. defaults by risk: read → allow, workspace_write → allow,
//     network → ask, external → ask.
package policy

import (
	"strings"
)

// Decision is allow, ask or deny.
type Decision string

// Decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Valid reports whether d is a decision.
func (d Decision) Valid() bool { return d == Allow || d == Ask || d == Deny }

// Source says what decided.
type Source string

// Sources, as in the policy.decision event.
const (
	SourceHard    Source = "hard"
	SourceRule    Source = "rule"
	SourceDefault Source = "default"
	SourceOwner   Source = "owner"
	SourceExpiry  Source = "expiry"
)

// Risk mirrors tool.Risk (policy imports no tool code).
type Risk string

// Risks.
const (
	RiskRead           Risk = "read"
	RiskWorkspaceWrite Risk = "workspace_write"
	RiskNetwork        Risk = "network"
	RiskExternal       Risk = "external"
)

// Rule is an owner's standing decision for a tool; for shell, optionally
// only for commands starting with CommandPrefix (whole words).
type Rule struct {
	ID            string   `json:"id"`
	ProjectID     string   `json:"projectId,omitempty"` // "" = global
	Tool          string   `json:"tool"`                // "*" = every tool
	CommandPrefix string   `json:"commandPrefix,omitempty"`
	Decision      Decision `json:"decision"`
}

// Call is one tool call with the facts policy needs.
type Call struct {
	Tool string
	Risk Risk
	// Command is the shell command, for prefix rules.
	Command string
	// Protected is set when the call would touch a protected path; it
	// says which.
	Protected string
	// Allowed is false when the tool is outside the contract's allowlist.
	Allowed bool
	// NetworkNone is true when the mission's network is "none".
	NetworkNone bool
	// CriteriaConfirmed is false until the owner accepted done criteria.
	CriteriaConfirmed bool
	ProjectID         string
}

// Verdict is a decision with its reason.
type Verdict struct {
	Decision Decision `json:"decision"`
	Source   Source   `json:"source"`
	Reason   string   `json:"reason"`
	RuleID   string   `json:"ruleId,omitempty"`
}

// Decide applies the decision order to c under rules.
func Decide(c Call, rules []Rule) Verdict {
	switch {
	case c.Protected != "":
		return Verdict{Deny, SourceHard, "protected path: " + c.Protected, ""}
	case !c.Allowed:
		return Verdict{Deny, SourceHard, "tool " + c.Tool + " is not in this mission's allowlist", ""}
	case c.NetworkNone && c.Risk == RiskNetwork && c.Tool != "shell":
		return Verdict{Deny, SourceHard, "the mission's network is off", ""}
	case !c.CriteriaConfirmed && c.Risk != RiskRead:
		return Verdict{Deny, SourceHard, "done criteria are not confirmed yet: propose them with propose_criteria and wait for the owner", ""}
	}
	line := lazyCommands(c.Command)
	for _, want := range []Decision{Deny, Ask, Allow} {
		for _, r := range rules {
			if r.Decision == want && matches(r, c, line) {
				return Verdict{want, SourceRule, ruleReason(r), r.ID}
			}
		}
	}
	switch c.Risk {
	case RiskRead, RiskWorkspaceWrite:
		return Verdict{Allow, SourceDefault, "default for " + string(c.Risk), ""}
	default:
		return Verdict{Ask, SourceDefault, "default for " + string(c.Risk) + ": the owner decides", ""}
	}
}

func ruleReason(r Rule) string {
	scope := "global"
	if r.ProjectID != "" {
		scope = "project"
	}
	s := scope + " rule " + string(r.Decision) + " " + r.Tool
	if r.CommandPrefix != "" {
		s += " `" + r.CommandPrefix + "`"
	}
	return s
}

func matches(r Rule, c Call, line func() commands) bool {
	if r.ProjectID != "" && r.ProjectID != c.ProjectID {
		return false
	}
	if r.Tool != "*" && r.Tool != c.Tool {
		return false
	}
	if r.CommandPrefix == "" {
		return true
	}
	if r.Decision == Allow {
		return HasCommandPrefix(c.Command, r.CommandPrefix) && startsWith(line(), r.CommandPrefix)
	}
	return restricts(line(), r.CommandPrefix)
}

// lazyCommands parses command once, on first use.
func lazyCommands(command string) func() commands {
	var cs *commands
	return func() commands {
		if cs == nil {
			v := shellCommands(command)
			cs = &v
		}
		return *cs
	}
}

// restricts reports whether a deny or ask rule for prefix covers a shell
// line: true when ANY simple command the line runs starts with prefix (as
// whole words, /bin/rm read as rm), or when the line cannot be known from
// its text (it does not parse, a command word is an expansion, a shell
// reads its script from stdin). See shellCommands for what is followed.
func restricts(cs commands, prefix string) bool {
	pw := strings.Fields(prefix)
	if len(pw) == 0 {
		return true
	}
	if cs.unknown {
		return true
	}
	pw[0] = commandName(pw[0])
	for _, argv := range cs.argvs {
		if len(argv) < len(pw) {
			continue
		}
		match := true
		for i := range pw {
			text := argv[i].text
			if i == 0 {
				text = commandName(text)
			}
			if argv[i].lit && text != pw[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// startsWith reports whether the line's own command, as the shell splits
// and unquotes it, starts with prefix word for word, literally (no path
// resolution: an allowed "make" does not allow "./make").
func startsWith(cs commands, prefix string) bool {
	pw := strings.Fields(prefix)
	if cs.unknown || len(cs.argvs) == 0 || len(pw) == 0 || len(cs.argvs[0]) < len(pw) {
		return false
	}
	for i, p := range pw {
		if w := cs.argvs[0][i]; !w.lit || w.text != p {
			return false
		}
	}
	return true
}

// DeniedBy reports whether a deny (or ask) rule for prefix covers command;
// see restricts.
func DeniedBy(command, prefix string) bool {
	return restricts(shellCommands(command), prefix)
}

// HasCommandPrefix reports whether command starts with prefix as whole
// words: "go test ./..." has prefix "go test" but not "go te". A command
// with shell control operators after the prefix (;, &&, |, `, $( …) never
// matches, so "go test; rm -rf ~" is not allowed by a "go test" rule.
func HasCommandPrefix(command, prefix string) bool {
	cw, pw := strings.Fields(command), strings.Fields(prefix)
	if len(pw) == 0 || len(cw) < len(pw) {
		return false
	}
	for i := range pw {
		if cw[i] != pw[i] {
			return false
		}
	}
	return !strings.ContainsAny(command, ";&|`$<>(){}\n\\")
}
