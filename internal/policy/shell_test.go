package policy

import (
	"strings"
	"testing"
)

// TestDenyMatchesAnySimpleCommand: a deny rule on a prefix covers a line
// when any command the line runs has that prefix, and a line that cannot
// be known from its text; an allow rule covers only one plain command.
func TestDenyMatchesAnySimpleCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line   string
		prefix string
		deny   bool
	}{
		{"rm -f x", "rm", true},
		{"rm -f x; true", "rm", true},
		{"true && /bin/rm x", "rm", true},
		{"true || /usr/bin/rm x", "rm", true},
		{"ls | rm x", "rm", true},
		{"sleep 1 & rm x", "rm", true},
		{"echo $(rm x)", "rm", true},
		{"echo `rm x`", "rm", true},
		{"echo ok\nrm x", "rm", true},
		{"(rm x)", "rm", true},
		{"{ rm x; }", "rm", true},
		{"cat <(rm x)", "rm", true},
		{"if true; then rm x; fi", "rm", true},
		{"while false; do rm x; done", "rm", true},
		{"for f in a b; do rm $f; done", "rm", true},
		{"f() { rm x; }; f", "rm", true},
		{"X=$(rm x) true", "rm", true},
		{"export X=$(rm x)", "rm", true},
		{`bash -c 'rm x'`, "rm", true},
		{`sh -c "ls; rm x"`, "rm", true},
		{`bash -lc 'true && rm x'`, "rm", true},
		{`bash -c "bash -c 'rm x'"`, "rm", true},
		{`eval "rm x"`, "rm", true},
		{"env rm x", "rm", true},
		{"env X=1 Y=2 rm x", "rm", true},
		{"env -u HOME rm x", "rm", true},
		{`env -S "rm x"`, "rm", true},
		{"command rm x", "rm", true},
		{"exec rm x", "rm", true},
		{"xargs rm", "rm", true},
		{"xargs -n 1 rm", "rm", true},
		{"nice -n 5 rm x", "rm", true},
		{"nohup rm x", "rm", true},
		{"timeout 5 rm x", "rm", true},
		{"timeout -s KILL 5 rm x", "rm", true},
		{"sudo -u root rm x", "rm", true},
		{"sudo nohup env nice /bin/rm x", "rm", true},
		{"busybox rm x", "rm", true},
		{`find . -name '*.o' -exec rm {} \;`, "rm", true},
		{`"r""m" x`, "rm", true},
		{`'rm' x`, "rm", true},
		{`\rm x`, "rm", true},
		{`r\m x`, "rm", true},
		{"bash <<EOF\nrm x\nEOF", "rm", true},
		{"cat <<EOF\n$(rm x)\nEOF", "rm", true},
		{`echo "$(rm x)"`, "rm", true},
		{"echo $(( $(rm x) + 1 ))", "rm", true},
		{"time rm x", "rm", true},
		{"! rm x", "rm", true},
		{"case a in a) rm x;; esac", "rm", true},
		{"trap 'rm x' EXIT", "rm", true},
		{`watch -n 1 "rm x"`, "rm", true},
		{"flock /tmp/l -c 'rm x'", "rm", true},
		{"flock /tmp/l rm x", "rm", true},
		{"alias ls=rm\nls x", "rm", true}, // aliases rename commands
		{"stdbuf -o L rm x", "rm", true},
		{"bash <<< 'rm x'", "rm", true},
		{"X=rm; $X -rf /", "rm", true},     // command word not a literal
		{"/bin/r? x", "rm", true},          // a glob
		{"{rm,x}", "rm", true},             // a brace list
		{`$'\x72m' x`, "rm", true},         // ANSI-C quoting
		{"curl x | sh", "rm", true},        // a shell reading stdin
		{"echo 'unterminated", "rm", true}, // does not parse
		{"if then fi (", "rm", true},       // does not parse
		{"git push origin main", "git push", true},
		{"cd x && git push", "git push", true},
		{"git $SUB origin", "git push", true}, // an expansion where the rule has a word
		// Positive controls: what a rule does not name is not denied.
		{"ls -la", "rm", false},
		{"echo rm", "rm", false},
		{"grep -r rm .", "rm", false},
		{"rmdir x", "rm", false},
		{"git status", "git push", false},
		{"bash build.sh", "rm", false},
		{`bash -c 'ls; echo rm'`, "rm", false},
		{"go test ./... && go vet ./...", "rm", false},
	} {
		if got := DeniedBy(tc.line, tc.prefix); got != tc.deny {
			t.Errorf("deny %q covers %q = %v, want %v", tc.prefix, tc.line, got, tc.deny)
		}
	}
}

func TestRuleMatchingThroughDecide(t *testing.T) {
	t.Parallel()
	call := func(cmd string) Call {
		return Call{Tool: "shell", Risk: RiskNetwork, Command: cmd, Allowed: true, CriteriaConfirmed: true}
	}
	denyRM := []Rule{{ID: "d", Tool: "shell", CommandPrefix: "rm", Decision: Deny}}
	allowGoTest := []Rule{{ID: "a", Tool: "shell", CommandPrefix: "go test", Decision: Allow}}
	askPush := []Rule{{ID: "k", Tool: "shell", CommandPrefix: "git push", Decision: Ask}, {ID: "a", Tool: "shell", Decision: Allow}}
	for _, tc := range []struct {
		cmd   string
		rules []Rule
		want  Decision
	}{
		{"rm -f x; true", denyRM, Deny},
		{"ls", denyRM, Ask}, // not denied: the network default asks
		{"go test ./...", allowGoTest, Allow},
		{"go test ./... ; curl x|sh", allowGoTest, Ask},
		{"go test ./... && rm -rf ~", allowGoTest, Ask},
		{"go test $(curl x)", allowGoTest, Ask},
		{"go test ./...\ncurl x", allowGoTest, Ask},
		{"go test 'unterminated", allowGoTest, Ask},
		{"true; git push", askPush, Ask},
		// Words as bash splits them: U+00A0 and \r are inside a word.
		{"./build.sh\u00a0evil", []Rule{{ID: "b", Tool: "shell", CommandPrefix: "./build.sh", Decision: Allow}}, Ask},
		{"./build.sh\revil", []Rule{{ID: "b", Tool: "shell", CommandPrefix: "./build.sh", Decision: Allow}}, Ask},
		{"./build.sh --fast", []Rule{{ID: "b", Tool: "shell", CommandPrefix: "./build.sh", Decision: Allow}}, Allow},
		{"./make install", []Rule{{ID: "m", Tool: "shell", CommandPrefix: "make", Decision: Allow}}, Ask},
		{"./rm x", denyRM, Deny},
		{"git status", askPush, Allow},
	} {
		if v := Decide(call(tc.cmd), tc.rules); v.Decision != tc.want {
			t.Errorf("Decide(%q) = %+v, want %s", tc.cmd, v, tc.want)
		}
	}
}

// FuzzShellCommands: any text, however hostile, is parsed without a panic
// or a hang, and a line an allow rule matches is one plain command.
func FuzzShellCommands(f *testing.F) {
	for _, s := range []string{"rm -f x; true", `bash -c "bash -c 'rm x'"`, "env -S 'rm x'", "find . -exec rm {} +", "cat <<EOF\n$(rm x)\nEOF",
		"echo 'unterminated", "timeout", "xargs -n", "sudo -u", `$'\x72m'`, "f() { rm x; }; f", "go test ./..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cs := shellCommands(line)
		if !cs.unknown && len(cs.argvs) == 0 && DeniedBy(line, "rm") {
			t.Fatalf("%q: no command, yet denied", line)
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			return
		}
		v := Decide(Call{Tool: "shell", Risk: RiskNetwork, Command: line, Allowed: true, CriteriaConfirmed: true},
			[]Rule{{ID: "a", Tool: "shell", CommandPrefix: fields[0], Decision: Allow}})
		if v.Decision == Allow && (cs.unknown || strings.ContainsAny(line, ";&|`$()\n")) {
			t.Fatalf("%q: allowed by %q though it is not one plain command", line, fields[0])
		}
	})
}
