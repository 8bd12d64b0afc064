package script

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, err string
		scripts        int
	}{
		{"single script gets the file name", "turns: [{text: hi}]\n", "", 1},
		{"set", "default: b\nscripts: [{name: a, turns: []}, {name: b, turns: []}]\n", "", 2},
		{"json", `{"scripts":[{"name":"a","turns":[{"text":"hi","delay":"10ms"}]}]}`, "", 1},
		{"unknown field", "turns: [{txt: hi}]\n", "field txt not found", 0},
		{"duplicate", "scripts: [{name: a}, {name: a}]\n", "defined twice", 0},
		{"bad default", "default: zz\nscripts: [{name: a}]\n", `default "zz"`, 0},
		{"tool call without name", "turns: [{tool_calls: [{input: {}}]}]\n", "has no name", 0},
		{"bad status", "turns: [{error: {status: 200}}]\n", "not an HTTP error", 0},
		{"two checks in one assertion", "turns: [{expect: [{has_tool: a, system_contains: b}]}]\n", "exactly one", 0},
		{"bad duration", "turns: [{delay: soon}]\n", "bad duration", 0},
		{"not yaml", "turns: [", "parse", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set, err := Parse([]byte(c.src), "file")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Scripts) != c.scripts {
				t.Errorf("%d scripts", len(set.Scripts))
			}
			if c.name == "single script gets the file name" && set.Scripts[0].Name != "file" {
				t.Errorf("name = %q", set.Scripts[0].Name)
			}
		})
	}
}

func TestDurations(t *testing.T) {
	t.Parallel()
	set, err := Parse([]byte("turns: [{delay: 150ms, chunk_delay: 2, error: {status: 429, retry_after: 0.5}}]\n"), "d")
	if err != nil {
		t.Fatal(err)
	}
	tr := set.Scripts[0].Turns[0]
	if time.Duration(tr.Delay) != 150*time.Millisecond || time.Duration(tr.ChunkDelay) != 2*time.Second ||
		time.Duration(tr.Error.RetryAfter) != 500*time.Millisecond {
		t.Errorf("durations = %v %v %v", tr.Delay, tr.ChunkDelay, tr.Error.RetryAfter)
	}
}

func TestLoadDirectoryAndPrices(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("fix.yaml", "price: {input: 3, output: 15}\nturns: [{text: a}]\n")
	write("more.yml", "default: fix\nscripts: [{name: x, turns: []}]\n")
	write("notes.txt", "ignored")
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"fix", "x", EchoName} {
		if _, ok := set.Lookup(n); !ok {
			t.Errorf("script %q missing", n)
		}
	}
	if set.Default != "fix" {
		t.Errorf("default = %q", set.Default)
	}
	ps := set.Prices()
	if len(ps) != 1 || ps[0].ID != "script:fix" || ps[0].Price.Output != 15 {
		t.Errorf("prices = %+v", ps)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Errorf("missing file accepted")
	}
}

func TestAssertions(t *testing.T) {
	t.Parallel()
	conv, err := parseConversation(FormatAnthropic, []byte(`{"system":"You are aos","tools":[{"name":"shell"}],"messages":[
		{"role":"user","content":"fix the bug"},
		{"role":"assistant","content":[{"type":"tool_use","name":"shell","id":"1","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"1","content":[{"type":"text","text":"[exit code 1]"}],"is_error":true}]},
		{"role":"system","content":[{"type":"text","text":"wrap up soon"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	yes, no, one, two := true, false, 1, 2
	cases := []struct {
		a  Assertion
		ok bool
	}{
		{Assertion{LastToolResultContains: "exit code 1"}, true},
		{Assertion{LastToolResultContains: "exit code 0"}, false},
		{Assertion{LastToolResultError: &yes}, true},
		{Assertion{LastToolResultError: &no}, false},
		{Assertion{ToolResults: &one}, true},
		{Assertion{ToolResults: &two}, false},
		{Assertion{FirstUserContains: "bug"}, true},
		{Assertion{LastUserContains: "deploy"}, false},
		{Assertion{SystemContains: "aos"}, true},
		{Assertion{HasTool: "shell"}, true},
		{Assertion{HasTool: "edit"}, false},
		{Assertion{TranscriptContains: "exit code"}, true},
		{Assertion{OperatorNoteContains: "wrap up"}, true},
	}
	for _, c := range cases {
		err := c.a.Check(conv)
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.a, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), c.a.String()) {
			t.Errorf("error does not name the assertion: %v", err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(richScript))
	f.Add([]byte("turns: [{text: hi, tool_calls: [{name: a, input: {x: [1, 2]}}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Parse(data, "fuzz")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a parse error with no text")
			}
			return
		}
		if set == nil {
			t.Fatal("no error and no set")
		}
		for i, sc := range set.Scripts {
			if sc == nil || sc.Name == "" {
				t.Fatalf("script %d has no name after a successful parse", i)
			}
		}
	})
}

func FuzzParseConversation(f *testing.F) {
	for _, r := range firstRequests {
		f.Add(r.body)
	}
	f.Add(`{"input":[{"type":"function_call_output","call_id":"x","output":"y"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, fm := range []Format{FormatAnthropic, FormatResponses, FormatChat} {
			c, err := parseConversation(fm, []byte(body))
			if err != nil {
				continue
			}
			// The server is a pure function of the request: parsing the
			// same body twice must read the same conversation.
			c2, _ := parseConversation(fm, []byte(body))
			if !reflect.DeepEqual(c.LastToolResults(), c2.LastToolResults()) || c.FirstUserText() != c2.FirstUserText() {
				t.Fatalf("%s: the same body parsed twice differs", fm)
			}
		}
	})
}
