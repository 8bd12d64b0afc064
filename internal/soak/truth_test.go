//go:build linux

package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider/script"
)

// call is one tool call of the script, with what identifies it in a
// question or a timeline line.
type call struct {
	Turn  int
	Name  string
	Input map[string]any
	// marker is the value of its first input field (by name) cut to 40
	// characters: unique among the script's effectful calls.
	marker string
}

// effectful reports whether the call changes the workspace: the calls a
// reconcile question can be about.
func (c call) effectful() bool {
	switch c.Name {
	case "shell", "write_file", "edit_file", "git_commit":
		return true
	}
	return false
}

func (c call) String() string {
	b, _ := marshalNoEscape(c.Input)
	return c.Name + " " + string(b)
}

// loadCalls reads the script's tool calls in order.
func loadCalls(path string) ([]call, error) {
	set, err := script.Load(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	var sc *script.Script
	for i := range set.Scripts {
		if set.Scripts[i].Name == "soak" {
			sc = set.Scripts[i]
		}
	}
	if sc == nil {
		return nil, fmt.Errorf("script %s: no script named soak", path)
	}
	var out []call
	for i, turn := range sc.Turns {
		for _, tc := range turn.ToolCalls {
			in, ok := tc.Input.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("turn %d: input of %s is not an object", i, tc.Name)
			}
			c := call{Turn: i, Name: tc.Name, Input: in}
			keys := make([]string, 0, len(in))
			for k := range in {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if s, ok := in[keys[0]].(string); ok {
				c.marker = s
				if len(c.marker) > 40 {
					c.marker = c.marker[:40]
				}
			}
			out = append(out, c)
		}
	}
	seen := map[string]bool{}
	for _, c := range out {
		if c.effectful() {
			if c.marker == "" || seen[c.marker] {
				return nil, fmt.Errorf("script: effectful call %s has no unique marker", c)
			}
			seen[c.marker] = true
		}
	}
	return out, nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// escapedMarker is the marker as it appears inside a JSON string.
func (c call) escapedMarker() string {
	b, _ := marshalNoEscape(c.marker)
	return strings.Trim(string(b), `"`)
}

// identify finds the effectful call a question is about: by its input in
// the question's payload when the question shows it, else by the last
// "→ tool input" line the timeline printed before the question (the step
// that was started and never recorded).
func identify(calls []call, payload json.RawMessage, lastArrow string) (call, string, error) {
	var strs []string
	var v any
	if json.Unmarshal(payload, &v) == nil {
		collectStrings(v, &strs)
	}
	all := strings.Join(strs, "\n")
	for _, c := range calls {
		if c.effectful() && strings.Contains(all, c.marker) {
			return c, "payload", nil
		}
	}
	for _, c := range calls {
		if c.effectful() && strings.HasPrefix(lastArrow, "→ "+c.Name+" ") && strings.Contains(lastArrow, c.escapedMarker()) {
			return c, "timeline", nil
		}
	}
	return call{}, "", fmt.Errorf("cannot tell which call the question is about (payload %s; last started call %q)", oneLine(string(payload), 300), lastArrow)
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(e, out)
		}
	}
}

// appendCmd is the script's shell commands: [sleep N; ]echo LINE >> FILE.
var appendCmd = regexp.MustCompile(`^(?:sleep [0-9.]+; )?echo (\S+) >> (\S+)$`)

// tookEffect is the ground truth the owner knows: whether c's effect is in
// the mission's worktree (files) or on its branch in repo (commits). A
// question is asked while the mission runs, so its worktree exists.
func tookEffect(worktree, repo string, c call) (bool, error) {
	str := func(k string) string { s, _ := c.Input[k].(string); return s }
	switch c.Name {
	case "shell":
		f := appendCmd.FindStringSubmatch(str("command"))
		if f == nil {
			return false, fmt.Errorf("shell command %q is not an append the harness can check", str("command"))
		}
		lines, err := readLines(filepath.Join(worktree, f[2]))
		if err != nil {
			return false, err
		}
		return slices.Contains(lines, f[1]), nil
	case "write_file":
		b, err := os.ReadFile(filepath.Join(worktree, str("path")))
		if os.IsNotExist(err) {
			return false, nil
		}
		return err == nil && string(b) == str("content"), err
	case "edit_file":
		b, err := os.ReadFile(filepath.Join(worktree, str("path")))
		if err != nil {
			return false, err
		}
		return strings.Contains(string(b), str("newString")) && !strings.Contains(string(b), str("oldString")), nil
	case "git_commit":
		subjects, err := git(repo, "log", "--format=%s", "--branches=aos/*")
		if err != nil {
			return false, err
		}
		for _, s := range strings.Split(subjects, "\n") {
			if s == str("message") {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("no ground truth for %s", c.Name)
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

// pickOption chooses among a reconcile question's options the one that
// says ran (or did not run).
func pickOption(options []string, ran bool) (string, error) {
	want := kernel.ReconcileRerun
	if ran {
		want = kernel.ReconcileRan
	}
	for _, o := range options {
		if o == want {
			return o, nil
		}
	}
	// Reworded options: "did not run" versus "ran".
	for _, o := range options {
		l := strings.ToLower(o)
		notRun := strings.Contains(l, "not run") || strings.Contains(l, "didn't run") || strings.Contains(l, "did not")
		if notRun == !ran && (notRun || strings.Contains(l, "ran")) {
			return o, nil
		}
	}
	return "", fmt.Errorf("no option says ran=%v among %q", ran, options)
}
