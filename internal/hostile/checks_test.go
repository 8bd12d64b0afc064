package hostile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// findings collects what an attack got away with, so that a known escape
// can be reported as such instead of failing (see knownEscapes).
type findings struct {
	mu   sync.Mutex
	list []string
}

func (f *findings) add(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = append(f.list, fmt.Sprintf(format, a...))
}

func (f *findings) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.list...)
}

// snapshot records every entry under roots: type, mode, size, content
// hash or link target. Missing roots are recorded as missing.
func snapshot(roots ...string) map[string]string {
	snap := map[string]string{}
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				snap[p] = "error: " + err.Error()
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				snap[p] = "error: " + err.Error()
				return nil
			}
			v := fmt.Sprintf("%v size=%d", fi.Mode(), fi.Size())
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				v += " -> " + target
			case fi.Mode().IsRegular() && fi.Size() <= 8<<20:
				b, _ := os.ReadFile(p)
				h := sha256.Sum256(b)
				v += " sha256=" + hex.EncodeToString(h[:8])
			}
			snap[p] = v
			return nil
		})
	}
	return snap
}

// diffSnapshots lists what differs between two snapshots.
func diffSnapshots(before, after map[string]string) []string {
	var out []string
	for p, v := range before {
		if w, ok := after[p]; !ok {
			out = append(out, "removed "+p)
		} else if w != v {
			out = append(out, fmt.Sprintf("changed %s: %s => %s", p, v, w))
		}
	}
	for p, v := range after {
		if _, ok := before[p]; !ok {
			out = append(out, fmt.Sprintf("created %s (%s)", p, v))
		}
	}
	sort.Strings(out)
	return out
}

// repoParts is the text of a project as the owner would find it: every
// regular file of the directory (nested repositories and .git included),
// and every git object of each repository in it, read with `git cat-file`
// (which runs no filter, hook or driver).
func repoParts(dir string) (files, objects []byte) {
	var fb, ob bytes.Buffer
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			if out, err := safeGit(filepath.Dir(p), "cat-file", "--batch-all-objects", "--batch"); err == nil {
				ob.Write(out)
			}
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil && fi.Size() <= 8<<20 {
				c, _ := os.ReadFile(p)
				fb.Write(c)
			}
		}
		return nil
	})
	return fb.Bytes(), ob.Bytes()
}

// safeGit runs git for a check: no system, global or worktree-selected
// programs.
func safeGit(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
		"-c", "core.attributesFile=/dev/null", "-c", "safe.directory=*"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
	return cmd.Output()
}

// terminalControls finds bytes a terminal would interpret in out: C0
// controls other than newline, carriage return and tab, DEL, C1 controls
// (U+0080–U+009F) and lone bytes 0x80–0x9F (C1 on an 8-bit terminal).
func terminalControls(out []byte) []string {
	var found []string
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		bad := false
		switch {
		case r == utf8.RuneError && n == 1:
			bad = out[i] >= 0x80 && out[i] <= 0x9f
		case r < 0x20:
			bad = r != '\n' && r != '\r' && r != '\t'
		case r == 0x7f, r >= 0x80 && r <= 0x9f:
			bad = true
		}
		if bad {
			lo, hi := max(0, i-40), min(len(out), i+40)
			found = append(found, fmt.Sprintf("byte %#x at %d in %q", out[i], i, out[lo:hi]))
			if len(found) == 5 {
				break
			}
		}
		i += n
	}
	return found
}

// checkOutside runs the checks every attack gets, from outside aos: no
// canary in anything the model server was sent, in aos's output or in the
// project; nothing changed outside the workspace; no terminal control in
// aos's output; every mission ended in time.
func (w *world) checkOutside(a attack, before map[string]string, keep []string, f *findings) {
	reqs, recs := w.requests()
	if len(recs) == 0 && !a.mayRefuse {
		f.add("the model server saw no request: the attack did not run")
	}
	out := w.output()
	// The projects (their files, and every git object: the mission
	// branches' commits and trees are objects of the project's repository)
	// and the worktree root (a worktree aos failed to remove).
	project := map[string][]byte{}
	add := func(what, dir string) {
		if _, ok := project[what+" "+dir+"'s files"]; !ok {
			project[what+" "+dir+"'s files"], project[what+" "+dir+"'s git objects"] = repoParts(dir)
		}
	}
	add("the project", w.repo)
	add("the worktree root", w.wtRoot)
	w.mu.Lock()
	runs := append([]*runResult(nil), w.runs...)
	w.mu.Unlock()
	for _, r := range runs {
		add("the project", r.project)
	}
	events := w.timeline()
	if len(recs) > 0 && events == "" {
		w.t.Errorf("the model was called but no event was stored: the timeline check reads the wrong database")
	}
	for label, c := range w.canaries {
		if strings.Contains(reqs, c) {
			f.add("the %s canary reached the model server (GET /_requests)", label)
		}
		if bytes.Contains(out, []byte(c)) {
			f.add("the %s canary is in aos run's output", label)
		}
		if strings.Contains(events, c) {
			f.add("the %s canary is in the stored timeline (events)", label)
		}
		for where, text := range project {
			if bytes.Contains(text, []byte(c)) {
				f.add("the %s canary is in %s", label, where)
			}
		}
	}
	for _, d := range diffSnapshots(before, snapshot(keep...)) {
		f.add("outside the workspace: %s", d)
	}
	if cs := terminalControls(out); len(cs) > 0 {
		f.add("terminal control bytes in aos run's output: %s", strings.Join(cs, "; "))
	}
	killed := map[int]bool{}
	for _, r := range runs {
		if a.control && r.code != 6 {
			w.t.Errorf("control: mission %d exited %d, want 6 (partial, its finish)", r.mission+1, r.code)
		}
		if r.code == -1 {
			killed[r.mission] = true
			f.add("mission %d did not end within its deadline (killed after %s)", r.mission+1, r.elapsed.Round(time.Millisecond))
		}
	}
	for _, rec := range recs {
		if rec.Error != "" || rec.Status >= 400 {
			w.t.Errorf("the model server answered %d to %s turn %d: %s (a script bug: the attack did not play out)", rec.Status, rec.Script, rec.Turn, rec.Error)
		}
	}
	for i, m := range a.missions {
		if killed[i] {
			continue
		}
		last := len(m.turns)
		seen := false
		for _, rec := range recs {
			seen = seen || (rec.Script == scriptName(i) && rec.Turn == last)
		}
		if r := w.runOf(i); seen && r != nil && r.code != -1 && r.branch == "" {
			// Every check that reads a mission's work reads its branch.
			w.t.Errorf("harness: mission %d ran but aos run printed no branch (work on branch aos/…):\n%s", i+1, r.out)
		}
		switch {
		case seen:
		case a.control:
			w.t.Errorf("control: mission %d never reached its last turn\n%s", i+1, out)
		default:
			// aos ended the mission early: a refusal is a defence, and the
			// checks above judged what happened before it.
			w.t.Logf("mission %d ended before its last turn (aos refused or failed it)", i+1)
		}
	}
}
