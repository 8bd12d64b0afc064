package policy

import "testing"

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

func TestCommandPrefixOf(t *testing.T) {
	for in, want := range map[string]string{"go test ./...": "go test", "npm run build": "npm run", "ls -la": "ls", "./build.sh x": "./build.sh", "echo one": "echo", "git push origin": "git push", "": ""} {
		if got := CommandPrefixOf(in); got != want {
			t.Errorf("CommandPrefixOf(%q) = %q, want %q", in, got, want)
		}
	}
}
