//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
)

// limitedSetup is a setup whose sandbox has small limits.
func limitedSetup(t *testing.T, l sandbox.Limits) setup {
	t.Helper()
	st := newSetup(t)
	st.sb = newSandbox(t, sandbox.Config{HostHome: st.home, Limits: l})
	return st
}

func (st setup) argv(t *testing.T, argv ...string) sandbox.Outcome {
	t.Helper()
	out, err := st.sb.Run(context.Background(), sandbox.Spec{Argv: argv, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatalf("run %q: %v", argv, err)
	}
	return out
}

// TestProcessLimit: a command that tries 300 processes gets fewer, and
// nothing it started outlives it. As root, RLIMIT_NPROC does not apply
// (the sandbox uid is host root), so this holds only through the pids
// cgroup; unprivileged, through RLIMIT_NPROC.
//
// "late": the sandbox enters its cgroup only just before the command
// runs (the early move, cgroupmove.go, skipped), which must bound it
// the same.
func TestProcessLimit(t *testing.T) {
	t.Parallel()
	for _, late := range []bool{false, true} {
		t.Run(map[bool]string{false: "early", true: "late"}[late], func(t *testing.T) {
			t.Parallel()
			testProcessLimit(t, late)
		})
	}
}

func testProcessLimit(t *testing.T, late bool) {
	st := newSetup(t)
	cfg := sandbox.Config{HostHome: st.home, Limits: sandbox.Limits{MaxProcs: 64}}
	if late {
		cfg = sandbox.WithLateCgroupMove(cfg)
	}
	st.sb = newSandbox(t, cfg)
	secs := fmt.Sprintf("4%d", time.Now().UnixNano()%100000) // a marker
	for _, c := range []struct {
		n       int
		allowed bool
	}{{300, false}, {20, true}} { // 20: positive control
		out := st.argv(t, os.Args[0], "helper", "spawn", fmt.Sprint(c.n), secs)
		var started int
		if _, err := fmt.Sscanf(lastLine(out.Output), "started=%d", &started); err != nil {
			t.Fatalf("spawn %d: output %q", c.n, out.Output)
		}
		if c.allowed && started != c.n || !c.allowed && (started >= 64 || started == 0) {
			t.Errorf("spawn %d: %d started (limit 64)", c.n, started)
		}
		t.Logf("spawn %d: %d started", c.n, started)
	}
	// Nothing it left behind survives it: the sleeps die with the command.
	waitFor(t, 5*time.Second, "spawned sleeps to die", func() bool { return len(commandsStarting("sleep\x00"+secs+"\x00")) == 0 })
}

// TestMemoryLimit: allocating 1 GiB fails under a 256 MiB limit; 32 MiB
// works.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit a 256 MiB limit")
	}
	st := limitedSetup(t, sandbox.Limits{MaxMemory: 256 << 20})
	for _, c := range []struct {
		n  int64
		ok bool
	}{{1 << 30, false}, {32 << 20, true}} {
		out := st.argv(t, os.Args[0], "helper", "alloc", fmt.Sprint(c.n))
		got := out.ExitCode == 0 && strings.Contains(string(out.Output), fmt.Sprintf("allocated=%d", c.n))
		if got != c.ok {
			t.Errorf("alloc %d: exit %d, want ok=%v; output %s", c.n, out.ExitCode, c.ok, lastLines(out.Output))
		}
	}
}

// TestFileSizeAndOpenFilesLimits: a write beyond the file-size limit
// fails and leaves at most the limit on disk; smaller files are fine; the
// descriptor limit is what the command sees, soft and hard.
func TestFileSizeAndOpenFilesLimits(t *testing.T) {
	t.Parallel()
	st := limitedSetup(t, sandbox.Limits{MaxFileSize: 1 << 20, MaxOpenFiles: 77})
	out := st.sh(t, sandbox.NetworkNone, "head -c 2097152 /dev/zero > big; echo big=$?; head -c 524288 /dev/zero > small; echo small=$?; echo nofile=$(ulimit -n)/$(ulimit -Hn)")
	s := string(out.Output)
	if fi, err := os.Stat(filepath.Join(st.workspace, "big")); err != nil || fi.Size() > 1<<20 || strings.Contains(s, "big=0") {
		t.Errorf("write past the limit: %v %v; output %s", fi.Size(), err, s)
	}
	if fi, err := os.Stat(filepath.Join(st.workspace, "small")); err != nil || fi.Size() != 524288 || !strings.Contains(s, "small=0") {
		t.Errorf("positive control: small file: %v; output %s", err, s)
	}
	if !strings.Contains(s, "nofile=77/77") {
		t.Errorf("descriptor limit: %s", s)
	}
}

// TestDiskQuota: after a command, a run over its disk quota is reported
// (Outcome.DiskQuota); under it, not. .git does not count.
func TestDiskQuota(t *testing.T) {
	t.Parallel()
	st := limitedSetup(t, sandbox.Limits{MaxDisk: 1 << 20})
	if err := os.MkdirAll(filepath.Join(st.workspace, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(st.workspace, ".git", "pack"), strings.Repeat("x", 2<<20))
	out := st.sh(t, sandbox.NetworkNone, "head -c 102400 /dev/urandom > a")
	if out.DiskQuota != nil {
		t.Errorf("positive control: 100 KiB (and a 2 MiB .git) over a 1 MiB quota: %v", out.DiskQuota)
	}
	out = st.sh(t, sandbox.NetworkNone, "head -c 700000 /dev/urandom > b; head -c 700000 /dev/urandom > $TMPDIR/c")
	if out.DiskQuota == nil || out.DiskQuota.Limit != 1<<20 || out.DiskQuota.Used <= 1<<20 {
		t.Fatalf("1.4 MB in workspace and TMPDIR: DiskQuota %v", out.DiskQuota)
	}
	t.Log(out.DiskQuota)
}

func TestDiskUsage(t *testing.T) {
	t.Parallel()
	d := realTemp(t)
	writeFile(t, filepath.Join(d, "a"), strings.Repeat("x", 64<<10))
	if err := os.Link(filepath.Join(d, "a"), filepath.Join(d, "a-link")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(d, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // 1 GiB apparent, no blocks
		t.Fatal(err)
	}
	_ = f.Close()
	if err := os.Mkdir(filepath.Join(d, "skip"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(d, "skip", "big"), strings.Repeat("x", 1<<20))
	used, err := sandbox.DiskUsage(t.Context(), []string{d}, []string{filepath.Join(d, "skip")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if used < 64<<10 || used > 256<<10 {
		t.Errorf("used %d, want about 64 KiB (one copy of a, a sparse file, no skip/)", used)
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func lastLines(b []byte) string {
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}

// TestLimitsCanBeTurnedOff: with every limit unlimited (and no cgroups)
// the probe still admits commands, which then run without prlimit.
func TestLimitsCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	st.sb = newSandbox(t, sandbox.Config{HostHome: st.home, CgroupRoot: "none",
		Limits: sandbox.Limits{MaxProcs: -1, MaxMemory: -1, MaxFileSize: -1, MaxOpenFiles: -1, MaxDisk: -1}})
	if out := st.sh(t, sandbox.NetworkNone, "head -c 2097152 /dev/zero > f"); out.ExitCode != 0 || out.DiskQuota != nil {
		t.Errorf("%+v", out)
	}
}

func TestParseLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"", 0, true}, {"unlimited", -1, true}, {"512", 512, true}, {"4K", 4 << 10, true},
		{"512M", 512 << 20, true}, {"2GiB", 2 << 30, true}, {"1t", 1 << 40, true}, {"8gb", 8 << 30, true},
		{"0", 0, false}, {"-1", 0, false}, {"1.5G", 0, false}, {"G", 0, false}, {"1P", 0, false}, {"9999999999T", 0, false},
	} {
		got, err := sandbox.ParseLimit(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseLimit(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestConfigFromEnvLimits: the AOS_SANDBOX_MAX_* variables reach the
// limits, and a malformed one makes New fail instead of running unbounded.
func TestConfigFromEnvLimits(t *testing.T) {
	env := map[string]string{
		"AOS_SANDBOX_MAX_PROCS":        "100",
		"AOS_SANDBOX_MAX_MEMORY":       "1G",
		"AOS_SANDBOX_MAX_FILE_SIZE":    "unlimited",
		"AOS_SANDBOX_EXTRA_ALLOW_READ": "/opt/tools, /srv/data",
		"HOME":                         "/home/owner",
	}
	getenv := func(k string) string { return env[k] }
	c := sandbox.ConfigFromEnv(getenv, "/var/lib/aos")
	if c.Limits.MaxProcs != 100 || c.Limits.MaxMemory != 1<<30 || c.Limits.MaxFileSize != -1 || c.Limits.MaxDisk != 0 {
		t.Errorf("limits %+v", c.Limits)
	}
	if c.HostHome != "/home/owner" {
		t.Errorf("host home %q, want HOME's", c.HostHome)
	}
	if strings.Join(c.AllowRead, ",") != "/opt/tools,/srv/data" {
		t.Errorf("allow read %v", c.AllowRead)
	}
	if _, err := sandbox.New(c); err != nil {
		t.Errorf("valid config: %v", err)
	}
	env["AOS_SANDBOX_MAX_MEMORY"] = "lots"
	if _, err := sandbox.New(sandbox.ConfigFromEnv(getenv, "/var/lib/aos")); err == nil || !strings.Contains(err.Error(), "AOS_SANDBOX_MAX_MEMORY") {
		t.Errorf("malformed limit: err %v", err)
	}
}

// TestDiskQuotaFailsClosed: data the walk cannot reach (here below a path
// longer than PATH_MAX, made with relative cds) counts as over quota.
func TestDiskQuotaFailsClosed(t *testing.T) {
	t.Parallel()
	st := limitedSetup(t, sandbox.Limits{MaxDisk: 64 << 20})
	name := strings.Repeat("d", 200)
	out := st.sh(t, sandbox.NetworkNone, fmt.Sprintf("for i in $(seq 25); do mkdir %[1]s && cd %[1]s || exit 1; done; head -c 4096 /dev/zero > f && echo made", name))
	if !strings.Contains(string(out.Output), "made") {
		t.Fatalf("output %s", out.Output)
	}
	if out.DiskQuota == nil || out.DiskQuota.Err == nil {
		t.Fatalf("unmeasurable tree: DiskQuota %v", out.DiskQuota)
	}
	t.Log(out.DiskQuota)
	// Positive control: a shallow tree of the same size is measured.
	out = st.sh(t, sandbox.NetworkNone, "rm -rf d*; mkdir -p a/b/c && head -c 4096 /dev/zero > a/b/c/f")
	if out.DiskQuota != nil {
		t.Errorf("positive control: %v", out.DiskQuota)
	}
}
