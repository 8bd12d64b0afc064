package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Network is the network mode of a sandboxed command.
type Network string

// Network modes. NetworkNone gives the command its own empty network
// namespace; NetworkOpen shares the host's network for outbound connections
// while unix sockets and listening (unless Spec.Listen) stay refused by
// seccomp.
const (
	NetworkNone Network = "none"
	NetworkOpen Network = "open"
)

// Defaults for Config fields left zero.
const (
	DefaultOutputCap = 1 << 20
	DefaultKillGrace = 2 * time.Second
	DefaultTimeout   = 10 * time.Minute
	DefaultPath      = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	DefaultLang      = "C.UTF-8"
	DefaultTerm      = "dumb"
)

// SandboxUID is the uid and gid the command runs as inside its user
// namespace. It is non-zero so that nothing inside looks like root.
const SandboxUID = 1000

// Config configures a Sandbox. The zero value is usable: every field has a
// default resolved by New.
type Config struct {
	// BwrapPath is the bwrap binary; empty means look it up in PATH.
	BwrapPath string
	// HostHome is the real user's home, whose secrets (~/.ssh, ~/.aws,
	// ~/.config, ~/.gnupg, ~/.claude*, ~/.codex*) are hidden. Empty means
	// os.UserHomeDir.
	HostHome string
	// DataDir is aos's data dir; it is hidden from commands.
	DataDir string
	// EnvFiles are env files (KEY=VALUE secrets) hidden from commands.
	EnvFiles []string
	// ExtraDenyRead are more absolute paths hidden from every command.
	ExtraDenyRead []string
	// StateDir holds the private device nodes used when running as root.
	// Empty means DataDir/sandbox, or a per-uid dir under os.TempDir.
	StateDir string
	// ProbeCommand runs the probe's inside half (ProbeChildMain). Empty
	// means the current executable with "sandbox probe-child".
	ProbeCommand []string
	// InitCommand runs the warm sandbox's init (InitMain). Empty means
	// the current executable with InitArg.
	InitCommand []string
	// OutputCap is the combined output cap in bytes (default 1 MiB).
	OutputCap int
	// KillGrace is the time between TERM and KILL (default 2 s).
	KillGrace time.Duration
	// Path, Lang and Term are the PATH, LANG and TERM given to commands.
	Path, Lang, Term string
	// Limits bounds each command's resources (see Limits).
	Limits Limits
	// AllowRead are paths inside the hidden home directories (the
	// owner's HOME, /root, /home) that commands may read. Protected paths
	// stay hidden even inside them.
	AllowRead []string
	// PrlimitPath is util-linux's prlimit, which sets the rlimits inside
	// the sandbox; empty means look it up in PATH.
	PrlimitPath string
	// SlirpPath is slirp4netns, which gives NetworkOpen commands their own
	// network namespace; empty means look it up in PATH.
	SlirpPath string
	// CgroupRoot is where per-command cgroups are made: a cgroup v1
	// hierarchy's mount directory holding per-controller directories
	// (pids, memory) or a cgroup v2 mount. Empty means /sys/fs/cgroup;
	// "none" never uses cgroups.
	CgroupRoot string

	envErr error // a malformed AOS_SANDBOX_* variable, reported by New
	// beforeGo, nil in production, is called with the command's argv
	// between the lifeline's "ready" and its "go" (lifeline.go); tests
	// use it to kill aos at that boundary.
	beforeGo func(argv []string)
	// lateCgroupMove, false in production, skips the early move of
	// bwrap's child into the command's cgroup (cgroupmove.go), so that
	// tests see the wrapper moved just before "go".
	lateCgroupMove bool
}

// Limits bounds one command. A zero field takes its default; a negative
// one means no limit. docs/SANDBOX.md says how each is enforced.
type Limits struct {
	// MaxProcs bounds the command's tasks (processes and threads): the
	// cgroup's pids.max when cgroups are usable, else RLIMIT_NPROC.
	MaxProcs int64
	// MaxMemory bounds memory in bytes: the whole command's cgroup memory
	// limit when cgroups are usable, and each process's RLIMIT_DATA.
	MaxMemory int64
	// MaxFileSize bounds each file a command writes (RLIMIT_FSIZE).
	MaxFileSize int64
	// MaxOpenFiles bounds each process's descriptors (RLIMIT_NOFILE).
	MaxOpenFiles int64
	// MaxDisk bounds the disk a run's commands may use: its workspace
	// (without the top-level .git), TMPDIR and HOME, measured after each
	// command (see DiskUsage and Outcome.Disk).
	MaxDisk int64
}

// Default limits (see Limits).
const (
	DefaultMaxProcs     = 1024
	DefaultMaxMemory    = 4 << 30
	DefaultMaxFileSize  = 512 << 20
	DefaultMaxOpenFiles = 4096
	DefaultMaxDisk      = 8 << 30
)

func (l Limits) resolve() Limits {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxProcs, DefaultMaxProcs)
	def(&l.MaxMemory, DefaultMaxMemory)
	def(&l.MaxFileSize, DefaultMaxFileSize)
	def(&l.MaxOpenFiles, DefaultMaxOpenFiles)
	def(&l.MaxDisk, DefaultMaxDisk)
	return l
}

// resolve fills in defaults. It fails only for an invalid configuration;
// a missing bwrap is reported later, by Probe and Run, as UnavailableError.
func (c Config) resolve() (Config, error) {
	if c.BwrapPath == "" {
		if p, err := exec.LookPath("bwrap"); err == nil {
			c.BwrapPath = p
		}
	}
	if c.HostHome == "" {
		if h, err := os.UserHomeDir(); err == nil {
			c.HostHome = h
		}
	}
	if c.StateDir == "" {
		if c.DataDir != "" {
			c.StateDir = filepath.Join(c.DataDir, "sandbox")
		} else {
			c.StateDir = filepath.Join(os.TempDir(), fmt.Sprintf("aos-sandbox-%d", os.Getuid()))
		}
	}
	if len(c.ProbeCommand) == 0 || len(c.InitCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return c, fmt.Errorf("sandbox: find own executable for the probe: %w", err)
		}
		if len(c.ProbeCommand) == 0 {
			c.ProbeCommand = []string{exe, "sandbox", "probe-child"}
		}
		if len(c.InitCommand) == 0 {
			c.InitCommand = []string{exe, InitArg}
		}
	}
	if c.envErr != nil {
		return c, c.envErr
	}
	c.Limits = c.Limits.resolve()
	if c.PrlimitPath == "" {
		if p, err := exec.LookPath("prlimit"); err == nil {
			c.PrlimitPath = p
		}
	}
	if c.SlirpPath == "" {
		if p, err := exec.LookPath("slirp4netns"); err == nil {
			c.SlirpPath = p
		}
	}
	if c.CgroupRoot == "" {
		c.CgroupRoot = "/sys/fs/cgroup"
	}
	if c.OutputCap <= 0 {
		c.OutputCap = DefaultOutputCap
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.Lang == "" {
		c.Lang = DefaultLang
	}
	if c.Term == "" {
		c.Term = DefaultTerm
	}
	for _, p := range append(append(append([]string{c.DataDir, c.StateDir}, c.EnvFiles...), c.ExtraDenyRead...), c.AllowRead...) {
		if p != "" && !filepath.IsAbs(p) {
			return c, &SpecError{Field: "config", Reason: fmt.Sprintf("path %q is not absolute", p)}
		}
	}
	return c, nil
}

// ConfigFromEnv returns the Config the worker and the CLI share, read
// through getenv (the environment the CLI's root passes down): dataDir
// hidden, HOME as HostHome, AOS_SANDBOX_EXTRA_DENY_READ and AOS_SANDBOX_EXTRA_ALLOW_READ
// (comma-separated paths, made absolute against the current directory) as
// ExtraDenyRead and AllowRead, AOS_ENV_FILE as an env file, and the limits
// AOS_SANDBOX_MAX_PROCS, AOS_SANDBOX_MAX_MEMORY, AOS_SANDBOX_MAX_FILE_SIZE,
// AOS_SANDBOX_MAX_OPEN_FILES and AOS_SANDBOX_MAX_DISK (a number, sizes
// with an optional K, M, G or T suffix in powers of 1024, or "unlimited").
// A malformed limit makes New fail.
func ConfigFromEnv(getenv func(string) string, dataDir string) Config {
	c := Config{DataDir: dataDir, HostHome: getenv("HOME")}
	c.ExtraDenyRead = absList(getenv("AOS_SANDBOX_EXTRA_DENY_READ"))
	c.AllowRead = absList(getenv("AOS_SANDBOX_EXTRA_ALLOW_READ"))
	if p := getenv("AOS_ENV_FILE"); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			c.EnvFiles = append(c.EnvFiles, abs)
		}
	}
	for _, l := range []struct {
		env string
		dst *int64
	}{
		{"AOS_SANDBOX_MAX_PROCS", &c.Limits.MaxProcs},
		{"AOS_SANDBOX_MAX_MEMORY", &c.Limits.MaxMemory},
		{"AOS_SANDBOX_MAX_FILE_SIZE", &c.Limits.MaxFileSize},
		{"AOS_SANDBOX_MAX_OPEN_FILES", &c.Limits.MaxOpenFiles},
		{"AOS_SANDBOX_MAX_DISK", &c.Limits.MaxDisk},
	} {
		v, err := ParseLimit(getenv(l.env))
		if err != nil && c.envErr == nil {
			c.envErr = &SpecError{Field: "config", Reason: fmt.Sprintf("%s: %v", l.env, err)}
		}
		*l.dst = v
	}
	return c
}

func absList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				out = append(out, abs)
			}
		}
	}
	return out
}

// ParseLimit parses a limit: "" is 0 (the default), "unlimited" is -1,
// otherwise a positive integer with an optional K, M, G or T suffix
// (powers of 1024; a trailing "B" or "iB" is accepted).
func ParseLimit(v string) (int64, error) {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "":
		return 0, nil
	case "unlimited", "none", "off":
		return -1, nil
	}
	num := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(v), "IB"), "B")
	shift := 0
	if n := len(num); n > 0 {
		if i := strings.IndexByte("KMGT", num[n-1]); i >= 0 {
			shift = 10 * (i + 1)
			num = num[:n-1]
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is not a positive number with an optional K, M, G or T suffix, or \"unlimited\"", v)
	}
	return n << shift, nil
}
