package tool_test

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/tool"
)

// checkStrict walks a schema: every object must forbid additional
// properties and require every property (OpenAI strict mode).
func checkStrict(t *testing.T, where string, s map[string]any) {
	t.Helper()
	if typ, _ := s["type"].(string); typ == "object" {
		if s["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties is not false", where)
		}
		props, _ := s["properties"].(map[string]any)
		var names, req []string
		for k := range props {
			names = append(names, k)
		}
		for _, r := range s["required"].([]any) {
			req = append(req, r.(string))
		}
		sort.Strings(names)
		sort.Strings(req)
		if !reflect.DeepEqual(names, req) && !(len(names) == 0 && len(req) == 0) {
			t.Errorf("%s: required %v, properties %v", where, req, names)
		}
		for k, v := range props {
			checkStrict(t, where+"."+k, v.(map[string]any))
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		checkStrict(t, where+"[]", items)
	}
}

func TestSchemasStrict(t *testing.T) {
	t.Parallel()
	reg := tool.Default()
	want := []string{"read_file", "list_dir", "search", "edit_file", "write_file", "shell", "git_status", "git_diff", "git_commit", "git_push", "read_artifact", "ask_owner", "update_criteria", "propose_criteria", "finish"}
	if got := reg.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("names %v", got)
	}
	for _, tl := range reg.All() {
		var s map[string]any
		if err := json.Unmarshal(tl.Schema(), &s); err != nil {
			t.Fatalf("%s: %v", tl.Name(), err)
		}
		checkStrict(t, tl.Name(), s)
		if tl.Description() == "" {
			t.Errorf("%s: no description", tl.Name())
		}
		if err := tl.Validate(json.RawMessage(`{"definitelyUnknown":1}`)); err == nil {
			t.Errorf("%s: unknown field accepted", tl.Name())
		}
		_ = tl.DescribeForApproval(json.RawMessage(`{}`)) // must not panic on bad input
	}
}

func TestEffectsAndRisks(t *testing.T) {
	t.Parallel()
	reg := tool.Default()
	for _, c := range []struct {
		name    string
		network sandbox.Network
		effect  tool.Effect
		risk    tool.Risk
		par     bool
	}{
		{"read_file", sandbox.NetworkNone, tool.EffectRead, tool.RiskRead, true},
		{"write_file", sandbox.NetworkNone, tool.EffectIdempotentWrite, tool.RiskWorkspaceWrite, false},
		{"shell", sandbox.NetworkNone, tool.EffectNonIdempotent, tool.RiskWorkspaceWrite, false},
		{"shell", sandbox.NetworkOpen, tool.EffectNonIdempotent, tool.RiskNetwork, false},
		{"git_commit", sandbox.NetworkNone, tool.EffectIdempotentWrite, tool.RiskWorkspaceWrite, false},
		{"git_push", sandbox.NetworkNone, tool.EffectNonIdempotent, tool.RiskExternal, false},
		{"finish", sandbox.NetworkNone, tool.EffectPure, tool.RiskRead, false},
	} {
		tl, _ := reg.Get(c.name)
		if e, r := tl.Effect(nil), tl.Risk(nil, c.network); e != c.effect || r != c.risk || tl.ParallelSafe() != c.par {
			t.Errorf("%s/%s: %s %s %v", c.name, c.network, e, r, tl.ParallelSafe())
		}
	}
	for _, n := range []string{"git_push", "git_commit"} {
		tl, _ := reg.Get(n)
		if _, ok := tl.(tool.Reconciler); !ok {
			t.Errorf("%s does not reconcile", n)
		}
	}
}

func TestControlToolsValidate(t *testing.T) {
	t.Parallel()
	reg := tool.Default()
	for _, c := range []struct {
		name, in string
		ok       bool
	}{
		{"finish", `{"status":"done","summary":"s","evidence":[],"openQuestions":[]}`, true},
		{"finish", `{"status":"cancelled","summary":"s","evidence":[],"openQuestions":[]}`, false},
		{"ask_owner", `{"question":"why?","options":null}`, true},
		{"ask_owner", `{"question":""}`, false},
		{"update_criteria", `{"updates":[{"id":"c1","passes":true,"evidence":"go test ok"}]}`, true},
		{"update_criteria", `{"updates":[{"id":"c1","passes":true,"evidence":""}]}`, false},
		{"update_criteria", `{"updates":[{"id":"c1","passes":true,"evidence":"x","text":"new text"}]}`, false},
		{"propose_criteria", `{"criteria":[{"text":"tests pass"}],"detail":"d"}`, true},
		{"shell", `{"command":"ls","timeoutSec":601}`, false},
		{"shell", `{"command":"ls","timeoutSec":600}`, true},
		{"git_push", `{"remote":"--upload-pack=evil","branch":null}`, false},
		{"git_push", `{"remote":"origin","branch":"feature/x"}`, true},
		{"read_file", `{"path":"a"} {"path":"b"}`, false},
	} {
		tl, _ := reg.Get(c.name)
		if err := tl.Validate(json.RawMessage(c.in)); (err == nil) != c.ok {
			t.Errorf("%s %s: err %v, want ok=%v", c.name, c.in, err, c.ok)
		}
	}
}
