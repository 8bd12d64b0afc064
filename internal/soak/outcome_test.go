//go:build linux

package soak

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// outcome is what a mission left behind, in the terms the soak compares.
type outcome struct {
	Status  string   // done, blocked, … or "exit N" when no end line was printed
	Log     []string // log.txt, line by line
	Commits []string // "subject tree" of each commit of the mission branch, oldest first
	Tools   []string // the tool-call sequence the model saw, with ok/error
	Files   []string // the workspace's files (outside .git) with their sizes
	Debris  []string // aos temp files in the workspace or in any commit
	Model   []string // model-server answers other than 200 (failed script assertions)
}

func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// collect reads the outcome of the mission whose branch is branch in
// repo, whose worktree was worktree and whose model server is at modelURL;
// status is the final process's verdict. log.txt and the files are read
// from the branch's final tree (aos commits what a mission leaves
// uncommitted before it removes the worktree, so an extra commit shows
// leftovers). The worktree must be gone, and the owner's checkout as the
// harness made it: anything else is debris.
func collect(repo, worktree, branch, modelURL, status string) (outcome, error) {
	o := outcome{Status: status}
	refs, err := git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/aos/")
	if err != nil {
		return o, err
	}
	if refs != "refs/heads/"+branch {
		return o, fmt.Errorf("mission branches %q, want exactly refs/heads/%s", refs, branch)
	}
	if o.Log, err = branchLines(repo, branch, "log.txt"); err != nil {
		return o, err
	}
	log, err := git(repo, "log", "--reverse", "--format=%H%x09%s%x09%T", "main.."+branch)
	if err != nil {
		return o, err
	}
	for _, l := range strings.Split(log, "\n") {
		if l == "" {
			continue
		}
		f := strings.SplitN(l, "\t", 3)
		o.Commits = append(o.Commits, f[1]+"  tree "+f[2])
		names, err := git(repo, "ls-tree", "-r", "--name-only", f[0])
		if err != nil {
			return o, err
		}
		for _, n := range strings.Split(names, "\n") {
			if isDebris(n) {
				o.Debris = append(o.Debris, fmt.Sprintf("committed in %q: %s", f[1], n))
			}
		}
	}
	// The final tree: "<mode> <type> <object> <size>\t<path>".
	tree, err := git(repo, "ls-tree", "-r", "-l", branch)
	if err != nil {
		return o, err
	}
	for _, l := range strings.Split(tree, "\n") {
		meta, path, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		o.Files = append(o.Files, fmt.Sprintf("%s (%s bytes)", path, f[len(f)-1]))
	}
	o.Debris = append(o.Debris, leftovers(repo, worktree)...)
	o.Tools, o.Model, err = toolSequence(modelURL)
	return o, err
}

// leftovers is what an ended mission must not leave: its worktree (with
// any aos temp file in it), its worktree's registration, or any change to
// the owner's checkout (HEAD, index, files).
func leftovers(repo, worktree string) []string {
	var out []string
	if _, err := os.Lstat(worktree); err == nil {
		out = append(out, "the mission's worktree was not removed: "+worktree)
		_ = filepath.WalkDir(worktree, func(p string, d fs.DirEntry, err error) error {
			if err == nil && isDebris(p) {
				out = append(out, "in the worktree: "+p)
			}
			return nil
		})
	}
	if list, err := git(repo, "worktree", "list", "--porcelain"); err != nil || strings.Count(list, "worktree ") != 1 {
		out = append(out, fmt.Sprintf("worktrees still registered: %q %v", list, err))
	}
	if head, err := git(repo, "symbolic-ref", "HEAD"); err != nil || head != "refs/heads/main" {
		out = append(out, fmt.Sprintf("the owner's HEAD moved: %q %v", head, err))
	}
	if st, err := git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored"); err != nil || st != "" {
		out = append(out, fmt.Sprintf("the owner's checkout changed: %q %v", st, err))
	}
	if subjects, err := git(repo, "log", "--format=%s", "main"); err != nil || subjects != "soak: initial" {
		out = append(out, fmt.Sprintf("the owner's main moved: %q %v", subjects, err))
	}
	return out
}

// branchLines reads a file of a branch's tree line by line with git
// cat-file (no filter); a missing file has no lines.
func branchLines(repo, branch, path string) ([]string, error) {
	if _, err := git(repo, "cat-file", "-e", branch+":"+path); err != nil {
		return nil, nil
	}
	s, err := git(repo, "cat-file", "blob", branch+":"+path)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

func isDebris(name string) bool {
	return strings.Contains(filepath.Base(name), ".aos-write-") || strings.HasPrefix(filepath.Base(name), ".aos-")
}

// recorded is the part of the model server's request log the soak reads.
type recorded struct {
	Turn   int             `json:"turn"`
	Status int             `json:"status"`
	Error  string          `json:"error"`
	Body   json.RawMessage `json:"body"`
}

func requests(modelURL string) ([]recorded, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(modelURL + "/_requests")
	if err != nil {
		return nil, fmt.Errorf("model server requests: %w", err)
	}
	defer resp.Body.Close()
	var rs []recorded
	if err := json.NewDecoder(resp.Body).Decode(&rs); err != nil {
		return nil, fmt.Errorf("decode model server requests: %w", err)
	}
	return rs, nil
}

// toolSequence reads, from the last request the model server received,
// the tool calls of the conversation in order, each with whether its
// result was an error; and every request the server refused.
func toolSequence(modelURL string) (tools, refused []string, err error) {
	rs, err := requests(modelURL)
	if err != nil {
		return nil, nil, err
	}
	// The latest request holds the whole conversation, a refused one
	// included: its last tool result is what the model objected to.
	var last *recorded
	for i := range rs {
		r := &rs[i]
		if r.Status != http.StatusOK {
			refused = append(refused, fmt.Sprintf("turn %d: HTTP %d %s", r.Turn, r.Status, oneLine(r.Error, 300)))
		}
		if last == nil || r.Turn >= last.Turn {
			last = r
		}
	}
	if last == nil {
		return nil, refused, nil
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(last.Body, &body); err != nil {
		return nil, nil, fmt.Errorf("decode the last model request: %w", err)
	}
	type block struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Content   json.RawMessage `json:"content"`
	}
	index := map[string]int{}
	for _, m := range body.Messages {
		var blocks []block
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				var in any
				_ = json.Unmarshal(b.Input, &in)
				enc, _ := marshalNoEscape(in)
				index[b.ID] = len(tools)
				tools = append(tools, b.Name+" "+string(enc)+" → (no result)")
			case "tool_result":
				i, ok := index[b.ToolUseID]
				if !ok {
					continue
				}
				res := "ok"
				if b.IsError {
					res = "error: " + oneLine(resultText(b.Content), 120)
				}
				tools[i] = strings.TrimSuffix(tools[i], "(no result)") + res
			}
		}
	}
	return tools, refused, nil
}

func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// diff compares an outcome with a reference (the clean run's, or what
// the script says) and returns a readable report, empty when they agree.
// names says what the two are, reference first.
func diff(clean, got outcome, names [2]string) string {
	var b strings.Builder
	if got.Status != clean.Status {
		fmt.Fprintf(&b, "status: %s, %s: %s\n", got.Status, names[0], clean.Status)
	}
	count := map[string]int{}
	for _, l := range got.Log {
		count[l]++
	}
	for _, l := range clean.Log {
		switch n := count[l]; {
		case n == 0:
			fmt.Fprintf(&b, "log.txt: %q is missing\n", l)
		case n > 1:
			fmt.Fprintf(&b, "log.txt: %q appears %d times (a side effect ran more than once)\n", l, n)
		}
	}
	sideBySide(&b, "log.txt", names, clean.Log, got.Log)
	sideBySide(&b, "commits of the mission branch", names, clean.Commits, got.Commits)
	sideBySide(&b, "tool calls the model saw", names, clean.Tools, got.Tools)
	sideBySide(&b, "workspace files", names, clean.Files, got.Files)
	if len(got.Debris) > 0 {
		fmt.Fprintf(&b, "debris:\n  %s\n", strings.Join(got.Debris, "\n  "))
	}
	if len(got.Model) > 0 {
		fmt.Fprintf(&b, "the scripted model refused requests (the conversation drifted):\n  %s\n", strings.Join(got.Model, "\n  "))
	}
	return b.String()
}

// sideBySide prints both lists when they differ, marking differing rows.
func sideBySide(b *strings.Builder, what string, names [2]string, want, got []string) {
	if strings.Join(want, "\n") == strings.Join(got, "\n") {
		return
	}
	fmt.Fprintf(b, "%s differ (! marks a difference; %s | %s):\n", what, names[0], names[1])
	n := max(len(want), len(got))
	for i := range n {
		w, g := "—", "—"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		mark := " "
		if w != g {
			mark = "!"
		}
		fmt.Fprintf(b, "  %s %2d  %s | %s\n", mark, i+1, w, g)
	}
}
