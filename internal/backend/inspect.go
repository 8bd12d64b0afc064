package backend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aos-run/aos/internal/gitx"
)

// Limits of the inspection.
const (
	maxPatchBytes = 32 << 20
	maxFindings   = 20
	maxFiles      = 5000
)

// FileChange is one file of a change set.
type FileChange struct {
	Path string `json:"path"`
	// Op is added, modified, deleted or mode_changed.
	Op      string `json:"op"`
	OldMode string `json:"oldMode,omitempty"`
	NewMode string `json:"newMode,omitempty"`
	OldBlob string `json:"oldBlob,omitempty"`
	NewBlob string `json:"newBlob,omitempty"`
}

// Inspection is what aos read of the worktree after the engine, itself.
type Inspection struct {
	Base string `json:"base"`
	Head string `json:"head"`
	// Refusal, when set, blocks the commit: the engine moved HEAD, the
	// change holds a nested repository, secrets were found, the patch is
	// too large.
	Refusal  string       `json:"refusal,omitempty"`
	Commits  []string     `json:"commits,omitempty"`
	Files    []FileChange `json:"files"`
	WriteSet []string     `json:"writeSet"`
	Findings []Finding    `json:"findings,omitempty"`
	// Staged is true when the change is in the worktree's index, ready to
	// commit.
	Staged bool `json:"staged"`
}

// git runs one hardened git command and fails on a non-zero exit.
func git(ctx context.Context, l *gitx.Linked, c gitx.Cmd) (string, error) {
	res, err := l.Run(ctx, c)
	if err != nil {
		return "", err
	}
	if res.Code != 0 {
		name := ""
		if len(c.Args) > 0 {
			name = c.Args[0]
		}
		return res.Stdout, fmt.Errorf("backend: git %s: exit %d: %s", name, res.Code, clip(strings.TrimSpace(res.Combined), 300))
	}
	return res.Stdout, nil
}

// Inspect reads the worktree's change against base with hardened git
// (never executing repository code), stages it if it is acceptable, and
// scans it for secrets. A refusal leaves the index as HEAD had it.
func Inspect(ctx context.Context, l *gitx.Linked, base, branch string) (Inspection, error) {
	in := Inspection{Base: base, Files: []FileChange{}, WriteSet: []string{}}
	head, err := git(ctx, l, gitx.Cmd{Args: []string{"rev-parse", "--verify", "--quiet", "HEAD^{commit}"}})
	if err != nil {
		return in, err
	}
	in.Head = strings.TrimSpace(head)
	if in.Head != base {
		out, _ := git(ctx, l, gitx.Cmd{Args: []string{"rev-list", "--max-count=20", in.Head, "^" + base, "--"}})
		in.Commits = strings.Fields(out)
		in.Refusal = fmt.Sprintf("the engine moved HEAD from the base %s to %s (%d commit(s) not on the base): an engine must not commit", short(base), short(in.Head), len(in.Commits))
		return in, nil
	}
	ref, err := git(ctx, l, gitx.Cmd{Args: []string{"symbolic-ref", "-q", "HEAD"}})
	if err != nil || strings.TrimSpace(ref) != "refs/heads/"+branch {
		in.Refusal = fmt.Sprintf("the worktree's HEAD is not on branch %s", branch)
		return in, nil
	}
	st, err := git(ctx, l, gitx.Cmd{Args: []string{"status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignore-submodules=none"}})
	if err != nil {
		return in, err
	}
	for _, e := range strings.Split(st, "\x00") {
		p, ok := strings.CutPrefix(e, "? ")
		if !ok || !strings.HasSuffix(p, "/") {
			continue
		}
		// git shows an untracked nested repository as its directory;
		// `git add` would record it as a gitlink and run git inside it,
		// under a config the engine wrote.
		if _, err := os.Lstat(filepath.Join(l.WorkTree(), filepath.FromSlash(p), ".git")); err == nil {
			in.Refusal = fmt.Sprintf("the change holds a nested git repository (%s); aos does not add it", clip(p, 200))
			return in, nil
		}
	}
	if _, err := git(ctx, l, gitx.Cmd{Args: []string{"add", "--all", "--", "."}}); err != nil {
		return in, err
	}
	in.Staged = true
	unstage := func() error {
		in.Staged = false
		_, err := git(ctx, l, gitx.Cmd{Args: []string{"reset", "-q"}})
		return err
	}
	raw, err := git(ctx, l, gitx.Cmd{Args: []string{"diff", "--cached", "--raw", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--abbrev=40", base, "--"}})
	if err != nil {
		return in, err
	}
	if in.Files, err = parseRaw(raw); err != nil {
		return in, err
	}
	for _, f := range in.Files {
		in.WriteSet = append(in.WriteSet, f.Path)
		if f.NewMode == "160000" {
			in.Refusal = fmt.Sprintf("the change adds a submodule (%s)", clip(f.Path, 200))
		}
	}
	sort.Strings(in.WriteSet)
	if len(in.Files) > maxFiles {
		in.Refusal = fmt.Sprintf("the change touches %d files, more than %d", len(in.Files), maxFiles)
	}
	if in.Refusal != "" {
		return in, unstage()
	}
	patch, err := git(ctx, l, gitx.Cmd{Args: []string{"diff", "--cached", "-U0", "--text", "--no-color", "--no-renames", "--no-ext-diff", "--no-textconv", base, "--"}})
	if err != nil {
		return in, err
	}
	if len(patch) > maxPatchBytes {
		in.Refusal = fmt.Sprintf("the change's diff is %d bytes, more than %d", len(patch), maxPatchBytes)
		return in, unstage()
	}
	if in.Findings = ScanPatch(patch, maxFindings); len(in.Findings) > 0 {
		in.Refusal = fmt.Sprintf("the secret scan found %d likely secret(s) in the change", len(in.Findings))
		return in, unstage()
	}
	return in, nil
}

// parseRaw reads `git diff --raw -z` output.
func parseRaw(raw string) ([]FileChange, error) {
	out := []FileChange{}
	parts := strings.Split(raw, "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		meta, p := parts[i], parts[i+1]
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(f) != 5 {
			return nil, fmt.Errorf("backend: unexpected diff --raw entry %q", clip(meta, 100))
		}
		c := FileChange{Path: p, OldMode: f[0], NewMode: f[1], OldBlob: f[2], NewBlob: f[3]}
		switch f[4][:1] {
		case "A":
			c.Op, c.OldMode, c.OldBlob = "added", "", ""
		case "D":
			c.Op, c.NewMode, c.NewBlob = "deleted", "", ""
		default:
			c.Op = "modified"
			if c.OldBlob == c.NewBlob && c.OldMode != c.NewMode {
				c.Op = "mode_changed"
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Commit commits the staged change on the worktree's branch with aos's
// trailers and returns the new commit.
func Commit(ctx context.Context, l *gitx.Linked, msg string) (string, error) {
	if _, err := git(ctx, l, gitx.Cmd{Args: []string{"commit", "-q", "--no-verify", "--no-gpg-sign", "--allow-empty-message", "-F", "-"},
		Stdin: msg, Env: gitx.DefaultIdentity}); err != nil {
		return "", err
	}
	h, err := git(ctx, l, gitx.Cmd{Args: []string{"rev-parse", "--verify", "HEAD^{commit}"}})
	return strings.TrimSpace(h), err
}

// ResetToBase puts the worktree back at base: index, files, and no
// untracked or ignored files left (rerun from the base).
func ResetToBase(ctx context.Context, l *gitx.Linked, base string) error {
	if _, err := git(ctx, l, gitx.Cmd{Args: []string{"reset", "-q", "--hard", base}}); err != nil {
		return err
	}
	_, err := git(ctx, l, gitx.Cmd{Args: []string{"clean", "-q", "-ffdx"}})
	return err
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
