//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkSandboxExecCommand compares, side by side in one run, `aos
// sandbox exec -- true` as a command (the aos binary built from this
// tree, admitted on its cached probe verdict) with bwrap run with the same
// flags, mounts and seccomp filter on `true` directly (its floor). Set
// AOS_BENCH_AOS_BEFORE to another aos binary to measure it too (e.g. one
// built before the probe cache).
func BenchmarkSandboxExecCommand(b *testing.B) {
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Skip("true not found")
	}
	aos := filepath.Join(b.TempDir(), "aos")
	build := exec.Command("go", "build", "-o", aos, "../../cmd/aos")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as scripts/run.sh builds it
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build aos: %v\n%s", err, out)
	}
	real := func(d string) string {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	dataDir, ws := real(b.TempDir()), real(b.TempDir())
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "AOS_DATA_DIR=" + dataDir, "TMPDIR=" + os.TempDir()}
	runAOS := func(b *testing.B, bin string) {
		cmd := exec.Command(bin, "sandbox", "exec", "--workspace", ws, "--", trueBin)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s sandbox exec: %v\n%s", bin, err, out)
		}
	}
	b.Run("aos_sandbox_exec_true", func(b *testing.B) {
		runAOS(b, aos) // primes the verdict cache
		for b.Loop() {
			runAOS(b, aos)
		}
	})
	if before := os.Getenv("AOS_BENCH_AOS_BEFORE"); before != "" {
		b.Run("aos_sandbox_exec_true_before", func(b *testing.B) {
			// Primes its own verdict (the cache key holds the binary's
			// identity), or one probe is counted in the loop.
			runAOS(b, before)
			for b.Loop() {
				runAOS(b, before)
			}
		})
	}
	b.Run("bwrap_same_flags_true", func(b *testing.B) {
		// The flags `aos sandbox exec` gives bwrap (same config, same
		// spec), with true in place of the lifeline and prlimit.
		s, err := New(ConfigFromEnv(os.Getenv, dataDir))
		if err != nil {
			b.Fatal(err)
		}
		p, cleanup, err := s.plan(Spec{Argv: []string{trueBin}, Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		defer cleanup()
		args := p.args(3, 4)
		for i, a := range args {
			if a == "--" {
				args = append(args[:i+1:i+1], trueBin)
				break
			}
		}
		devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = devNull.Close() }()
		for b.Loop() {
			sec, err := filterFile(NetworkNone, false)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(s.cfg.BwrapPath, args...)
			cmd.Env = []string{}
			cmd.ExtraFiles = []*os.File{sec, devNull}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("bwrap: %v\n%s", err, out)
			}
			_ = sec.Close()
		}
	})
}
