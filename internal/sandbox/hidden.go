package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// hiddenDirs resolves hiddenFor's candidates (the owner's home, /root,
// /home, Spec.Hide, the dirs holding TMPDIR and HOME) to the existing real
// directories, before nested ones are folded into their parents.
func (s *Sandbox) hiddenDirs(p plan) []string {
	cands := []string{s.cfg.HostHome, "/root", "/home"}
	cands = append(cands, p.hide...)
	for _, d := range []string{p.tmp, p.home} {
		parent := filepath.Dir(d)
		if strings.HasPrefix(filepath.Base(parent), runDirPrefix) {
			parent = filepath.Dir(parent)
		}
		cands = append(cands, parent)
	}
	var hidden []string
	for _, c := range cands {
		if c == "" {
			continue
		}
		real, err := filepath.EvalSymlinks(c)
		if err != nil || real == "/" {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		hidden = append(hidden, real)
	}
	return hidden
}

// runDirPrefix names a run's directory under the run-dir base (RunDirs).
const runDirPrefix = "aos-run-"

// hiddenFor lists the directories a command sees as empty, read-only
// tmpfs, and the paths exposed again (read-only) inside them:
//   - the owner's home (Config.HostHome), /root and /home: world-readable
//     owner files (~/.npmrc, ~/.kube/config, shell history) stay unread;
//   - the directory holding the run's TMPDIR and HOME (for RunDirs, the
//     run-dir base): another run's 0700 dirs are unreadable even when aos
//     runs as root, because only this run's are mounted back;
//   - Spec.Hide (other projects, other missions' worktrees).
//
// Exposed are Config.AllowRead and the program itself when it lies in a
// hidden dir (the probe runs aos, which may live in ~/go/bin). The
// writable roots are mounted back by args; protected covers still apply
// inside exposed paths.
// dirs is hiddenDirs(p), which plan has already checked.
func (s *Sandbox) hiddenFor(p plan, dirs []string) (hidden, exposed []string) {
	hidden = slices.Clone(dirs)
	if p.privateTmp {
		// A private /tmp is empty, as a hidden dir, but stays writable:
		// what is exposed under it is mounted back all the same.
		hidden = append(hidden, "/tmp")
	}
	hidden = outermost(hidden, p.expose)
	inHidden := func(x string) bool {
		for _, h := range hidden {
			if within(h, x) {
				return true
			}
		}
		return false
	}
	var want []string
	want = append(want, s.cfg.AllowRead...)
	want = append(want, p.expose...)
	if s.cfg.PrlimitPath != "" {
		want = append(want, s.cfg.PrlimitPath)
	}
	if len(p.argv) > 0 && filepath.IsAbs(p.argv[0]) {
		want = append(want, p.argv[0])
	}
	seen := map[string]bool{}
	for _, e := range want {
		real, err := filepath.EvalSymlinks(e)
		if err != nil || !inHidden(real) || seen[real] {
			continue // missing, or visible anyway
		}
		seen[real] = true
		exposed = append(exposed, real)
	}
	sort.Strings(exposed)
	if p.privateTmp {
		hidden = slices.DeleteFunc(hidden, func(h string) bool { return h == "/tmp" })
	}
	return hidden, exposed
}

// outermost sorts dirs and drops duplicates and dirs inside another one,
// unless something in keepUnder lies between them (then the inner one must
// be hidden again on top of what is exposed).
func outermost(dirs, keepUnder []string) []string {
	sort.Strings(dirs)
	var out []string
	for _, d := range dirs {
		if len(out) > 0 && within(out[len(out)-1], d) {
			between := false
			for _, k := range keepUnder {
				if within(out[len(out)-1], k) && within(k, d) && k != d {
					between = true
				}
			}
			if !between {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// visible reports whether path x is visible inside the sandbox, so that a
// cover over it is needed: outside every hidden dir, or inside something
// mounted back (an exposed path or a writable root).
func (p plan) visible(x string) bool {
	hidden := false
	for _, h := range p.hidden {
		if within(h, x) {
			hidden = true
		}
	}
	if !hidden {
		return true
	}
	for _, e := range append(append([]string{}, p.exposed...), p.workspace, p.tmp, p.home) {
		if within(e, x) || within(x, e) {
			return true
		}
	}
	return false
}

// wrapLimits runs the command under prlimit, which sets its rlimits (soft
// and hard, so the command cannot raise them) inside the sandbox before
// it execs: RLIMIT_NPROC, RLIMIT_DATA, RLIMIT_FSIZE and RLIMIT_NOFILE.
func (s *Sandbox) wrapLimits(p *plan) error {
	l := s.cfg.Limits
	data := l.MaxMemory
	if p.maxData > 0 {
		data = p.maxData
	}
	var args []string
	for _, r := range []rlimit{{"--nproc", l.MaxProcs}, {"--data", data}, {"--fsize", l.MaxFileSize}, {"--nofile", l.MaxOpenFiles}} {
		if r.v > 0 {
			args = append(args, r.flag+"="+strconv.FormatInt(r.v, 10))
			p.rlimits = append(p.rlimits, r)
		}
	}
	if len(args) == 0 {
		return nil
	}
	if s.cfg.PrlimitPath == "" {
		return &UnavailableError{Reason: "prlimit (util-linux) is not installed or not in PATH; it applies the sandbox's resource limits",
			Fix: "install util-linux, or set every AOS_SANDBOX_MAX_* limit to unlimited"}
	}
	p.argv = append(append(append([]string{s.cfg.PrlimitPath}, args...), "--"), p.argv...)
	p.prlimitArgc = len(args) + 2
	return nil
}

// rlimit is one resource limit the command runs under, named by
// prlimit's flag.
type rlimit struct {
	flag string
	v    int64
}
