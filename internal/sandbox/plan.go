package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// plan is a fully resolved Spec: real paths, the covers over protected
// paths and the argv to run inside.
type plan struct {
	workspace, tmp, home string
	readOnly             []string
	covers               []cover
	hidden               []string // empty read-only tmpfs: home dirs, other runs' dirs
	exposed              []string // read-only binds back inside hidden dirs
	expose               []string // Spec.Expose
	hide                 []string // Spec.Hide
	privateTmp           bool     // Spec.PrivateTmp: a writable tmpfs on /tmp
	maxData              int64    // Spec.MaxData: RLIMIT_DATA instead of Limits.MaxMemory
	blockFD              int      // bwrap waits on it before the command (network open); 0 = none
	network              Network
	devDir               string // private device nodes; "" means --dev /dev
	env                  []string
	argv                 []string
	rlimits              []rlimit // what the prlimit prefix of argv sets
	prlimitArgc          int      // the length of that prefix
	timeout              time.Duration
	extraFiles           []*os.File
	listen               bool // NetworkOpen: seccomp allows listen
}

// cover hides one protected path: an empty read-only tmpfs over a
// directory, an unopenable /dev/null bind over a file.
type cover struct {
	path string
	dir  bool
}

// allowedEnv are the keys a Spec may set; HOME and TMPDIR are set by the
// sandbox itself.
var allowedEnv = map[string]bool{"PATH": true, "LANG": true, "TERM": true}

func (s *Sandbox) plan(spec Spec) (plan, func(), error) {
	p := plan{network: spec.Network, timeout: spec.Timeout, expose: spec.Expose, hide: spec.Hide, privateTmp: spec.PrivateTmp, maxData: spec.MaxData, extraFiles: spec.ExtraFiles, listen: spec.Listen}
	if p.network == "" {
		p.network = NetworkNone
	}
	if p.network != NetworkNone && p.network != NetworkOpen {
		return p, nil, &SpecError{Field: "network", Reason: fmt.Sprintf("%q is not none or open", spec.Network)}
	}
	if p.network == NetworkOpen && len(p.extraFiles) > maxExtraFiles-1 {
		// The network's block pipe follows them, below the lifeline's 8.
		return p, nil, &SpecError{Field: "extraFiles", Reason: fmt.Sprintf("at most %d inherited files with network open (descriptors 5 and 6)", maxExtraFiles-1)}
	}
	if len(p.extraFiles) > maxExtraFiles {
		// Descriptors 8 and 9 are the lifeline's (see lifeline.go).
		return p, nil, &SpecError{Field: "extraFiles", Reason: fmt.Sprintf("at most %d inherited files (descriptors 5 to 7)", maxExtraFiles)}
	}
	for _, h := range p.hide {
		if !filepath.IsAbs(h) {
			return p, nil, &SpecError{Field: "hide", Reason: fmt.Sprintf("%q is not absolute", h)}
		}
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	switch {
	case len(spec.Argv) > 0 && spec.Command != "":
		return p, nil, &SpecError{Field: "argv", Reason: "both Argv and Command are set"}
	case len(spec.Argv) > 0:
		p.argv = spec.Argv
	case spec.Command != "":
		p.argv = append(Shell(), spec.Command)
	default:
		return p, nil, &SpecError{Field: "argv", Reason: "no command"}
	}
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	fail := func(err error) (plan, func(), error) { cleanup(); return p, nil, err }

	var err error
	if p.workspace, err = realDir("workspace", spec.Workspace); err != nil {
		return fail(err)
	}
	for _, d := range []struct {
		name string
		in   string
		out  *string
	}{{"tmpdir", spec.TmpDir, &p.tmp}, {"home", spec.Home, &p.home}} {
		if d.in == "" {
			dir, done, err := tempDir("aos-" + d.name + "-")
			if err != nil {
				return fail(err)
			}
			cleanups = append(cleanups, done)
			*d.out = dir
			continue
		}
		if *d.out, err = realDir(d.name, d.in); err != nil {
			return fail(err)
		}
	}
	if p.readOnly, err = readOnlyPaths(p.workspace, spec.ReadOnly); err != nil {
		return fail(err)
	}
	if p.covers, err = s.coversFor(spec.ExtraDenyRead); err != nil {
		return fail(err)
	}
	for _, c := range p.covers {
		for _, root := range []string{p.workspace, p.tmp, p.home} {
			// A root inside a protected path would be hidden by its cover
			// (bwrap then cannot even chdir); a protected path inside a
			// root would be hidden from the shell but not from the file
			// tools. Both are refused.
			if within(c.path, root) {
				return fail(&SpecError{Field: "workspace", Reason: fmt.Sprintf("writable root %s lies inside protected path %s", root, c.path)})
			}
			if within(root, c.path) {
				return fail(&SpecError{Field: "workspace", Reason: fmt.Sprintf("protected path %s lies inside writable root %s", c.path, root)})
			}
		}
	}
	dirs := s.hiddenDirs(p)
	for _, h := range dirs {
		for _, root := range []string{p.workspace, p.tmp, p.home} {
			// A hidden dir (other runs' dirs, the owner's home) strictly
			// inside a writable root would be mounted back by the root's
			// bind, which comes after the hiding: refused, like a
			// protected path there. Checked before nested hidden dirs are
			// folded into a parent that may contain the root.
			if h != root && within(root, h) {
				return fail(&SpecError{Field: "workspace", Reason: fmt.Sprintf("hidden path %s lies inside writable root %s", h, root)})
			}
		}
	}
	p.hidden, p.exposed = s.hiddenFor(p, dirs)
	if err := s.wrapLimits(&p); err != nil {
		return fail(err)
	}
	if os.Geteuid() == 0 {
		if p.devDir, err = ensureDevNodes(s.cfg.StateDir); err != nil {
			return fail(err)
		}
	}
	env := map[string]string{"PATH": s.cfg.Path, "LANG": s.cfg.Lang, "TERM": s.cfg.Term}
	for k, v := range spec.Env {
		if !allowedEnv[k] {
			return fail(&SpecError{Field: "env", Reason: fmt.Sprintf("%s is not in the allowlist (PATH, LANG, TERM)", k)})
		}
		env[k] = v
	}
	env["HOME"], env["TMPDIR"] = p.home, p.tmp
	for _, k := range []string{"HOME", "LANG", "PATH", "TERM", "TMPDIR"} {
		p.env = append(p.env, k, env[k])
	}
	return p, cleanup, nil
}

// realDir checks that dir is an absolute, existing directory whose path
// has no symlinks: bwrap follows symlinks in mount destinations, so a
// symlinked writable root could be redirected.
func realDir(field, dir string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", &SpecError{Field: field, Reason: fmt.Sprintf("%q is not an absolute path", dir)}
	}
	clean := filepath.Clean(dir)
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return "", &SpecError{Field: field, Reason: err.Error()}
	}
	if real != clean {
		return "", &SpecError{Field: field, Reason: fmt.Sprintf("%s contains a symlink (real path %s)", clean, real)}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", &SpecError{Field: field, Reason: err.Error()}
	}
	if !fi.IsDir() {
		return "", &SpecError{Field: field, Reason: real + " is not a directory"}
	}
	return real, nil
}

// readOnlyPaths resolves ReadOnly entries; missing ones are skipped and
// ones resolving outside the workspace are already read-only.
func readOnlyPaths(ws string, in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, &SpecError{Field: "readOnly", Reason: err.Error()}
		}
		if within(ws, real) && real != ws {
			out = append(out, real)
		}
	}
	return out, nil
}

// coversFor lists the protected paths that exist, resolved to real paths.
// A missing path gets no cover, so no placeholder is left behind.
func (s *Sandbox) coversFor(extra []string) ([]cover, error) {
	var cands []string
	if h := s.cfg.HostHome; h != "" {
		for _, n := range []string{".ssh", ".aws", ".config", ".gnupg", ".docker", ".netrc", ".git-credentials", ".pgpass"} {
			cands = append(cands, filepath.Join(h, n))
		}
		for _, g := range []string{".claude*", ".codex*"} {
			m, _ := filepath.Glob(filepath.Join(h, g))
			cands = append(cands, m...)
		}
	}
	// Root-only secrets: as root, the sandbox uid is host uid 0 for file
	// permission checks, so these would otherwise be readable.
	cands = append(cands, "/etc/shadow", "/etc/gshadow", "/etc/ssl/private")
	hostKeys, _ := filepath.Glob("/etc/ssh/ssh_host_*key")
	cands = append(cands, hostKeys...)
	if s.cfg.DataDir != "" {
		cands = append(cands, s.cfg.DataDir)
	}
	cands = append(cands, s.cfg.EnvFiles...)
	cands = append(cands, s.cfg.ExtraDenyRead...)
	for _, e := range extra {
		if !filepath.IsAbs(e) {
			return nil, &SpecError{Field: "extraDenyRead", Reason: fmt.Sprintf("%q is not absolute", e)}
		}
		cands = append(cands, e)
	}
	seen := map[string]bool{}
	var out []cover
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue // missing: nothing to hide
		}
		fi, err := os.Stat(real)
		if err != nil || seen[real] || real == "/" {
			continue
		}
		seen[real] = true
		out = append(out, cover{path: real, dir: fi.IsDir()})
	}
	// Parents before children, so a child cover is not hidden by a later
	// tmpfs over its parent.
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// args builds bwrap's argv (without the bwrap path). seccompFD and
// statusFD are the child's fd numbers. Each flag is explained in
// docs/SANDBOX.md.
func (p plan) args(seccompFD, statusFD int) []string {
	a := []string{
		"--unshare-user", "--uid", strconv.Itoa(SandboxUID), "--gid", strconv.Itoa(SandboxUID),
		"--disable-userns", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	}
	// Always a network namespace of its own: empty for NetworkNone, and
	// for NetworkOpen given outbound NAT by slirp4netns once bwrap has
	// reported the child's pid (the command waits on blockFD until then).
	a = append(a, "--unshare-net", "--die-with-parent", "--new-session", "--clearenv")
	for i := 0; i+1 < len(p.env); i += 2 {
		a = append(a, "--setenv", p.env[i], p.env[i+1])
	}
	a = append(a, "--ro-bind", "/", "/")
	if p.devDir == "" {
		a = append(a, "--dev", "/dev")
	} else {
		a = append(a, "--tmpfs", "/dev")
		for _, n := range devNodes {
			a = append(a, "--dev-bind", filepath.Join(p.devDir, n.name), "/dev/"+n.name)
		}
		a = append(a, "--tmpfs", "/dev/shm",
			"--symlink", "/proc/self/fd", "/dev/fd",
			"--symlink", "/proc/self/fd/0", "/dev/stdin",
			"--symlink", "/proc/self/fd/1", "/dev/stdout",
			"--symlink", "/proc/self/fd/2", "/dev/stderr",
			"--remount-ro", "/dev")
	}
	// A read-only /proc: as root, the sandbox uid is host uid 0, and
	// sysctl permission checks compare uids, not capabilities, so a
	// writable /proc/sys would let it rewrite global sysctls such as
	// kernel.core_pattern. bwrap's own cover of /proc/sys is skipped in
	// that case, so aos makes the whole /proc read-only.
	a = append(a, "--proc", "/proc", "--remount-ro", "/proc")
	if p.privateTmp {
		// Before the hidden dirs and the binds: what lies under /tmp and
		// must be seen is mounted back on top of it.
		a = append(a, "--tmpfs", "/tmp")
	}
	// Hidden dirs first (empty tmpfs), then what is exposed inside them,
	// then the writable roots; the tmpfs are made read-only last, once
	// every mount point inside them exists.
	// In path order, so that a dir hidden inside an exposed one (the
	// probe's run dirs) is hidden again on top of it.
	type layer struct {
		path string
		hide bool
	}
	var layers []layer
	for _, h := range p.hidden {
		layers = append(layers, layer{h, true})
	}
	for _, e := range p.exposed {
		layers = append(layers, layer{e, false})
	}
	sort.SliceStable(layers, func(i, j int) bool { return layers[i].path < layers[j].path })
	for _, l := range layers {
		if l.hide {
			a = append(a, "--tmpfs", l.path)
		} else {
			a = append(a, "--ro-bind", l.path, l.path)
		}
	}
	for _, w := range []string{p.workspace, p.tmp, p.home} {
		a = append(a, "--bind", w, w)
	}
	for _, r := range p.readOnly {
		a = append(a, "--ro-bind", r, r)
	}
	for _, c := range p.covers {
		if !p.visible(c.path) {
			continue // already hidden: a cover would only add a mount point
		}
		if c.dir {
			a = append(a, "--tmpfs", c.path, "--remount-ro", c.path)
		} else {
			a = append(a, "--ro-bind", "/dev/null", c.path)
		}
	}
	for _, h := range p.hidden {
		a = append(a, "--remount-ro", h)
	}
	if p.blockFD > 0 {
		a = append(a, "--block-fd", strconv.Itoa(p.blockFD))
	}
	a = append(a, "--chdir", p.workspace,
		"--seccomp", strconv.Itoa(seccompFD),
		"--json-status-fd", strconv.Itoa(statusFD),
		"--")
	// The command starts through the lifeline wrapper (lifeline.go).
	return append(a, lifelineArgv(p.argv)...)
}
