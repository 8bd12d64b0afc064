//go:build linux

package sandbox_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

// BenchmarkExec compares, side by side in one run, a plain os/exec of
// true, a bare `bwrap --ro-bind / / true`, and the sandbox running true
// directly and through the shell (what the shell tool does). Compare the
// ns/op columns for the overhead; docs/SANDBOX.md records the figures.
func BenchmarkExec(b *testing.B) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip("bwrap not installed")
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		b.Skip("true not found")
	}
	b.Run("plain_exec_true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(trueBin).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare_bwrap_true", func(b *testing.B) {
		args := []string{"--ro-bind", "/", "/", trueBin}
		if err := exec.Command(bwrap, args...).Run(); err != nil {
			// Unprivileged bwrap needs a user namespace for any mount.
			args = append([]string{"--unshare-user"}, args...)
		}
		for b.Loop() {
			if err := exec.Command(bwrap, args...).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	st := newBenchSetup(b)
	for _, c := range []struct {
		name string
		spec sandbox.Spec
	}{
		{"sandbox_argv_true", sandbox.Spec{Argv: []string{trueBin}}},
		{"sandbox_shell_true", sandbox.Spec{Command: "true"}},
		{"sandbox_shell_true_net_open", sandbox.Spec{Command: "true", Network: sandbox.NetworkOpen}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c.spec.Workspace = st.ws
			c.spec.TmpDir, c.spec.Home = st.tmp, st.home
			for b.Loop() {
				out, err := st.sb.Run(context.Background(), c.spec)
				if err != nil || out.ExitCode != 0 {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
	// The warm sandbox's start and teardown, paid once per run: one bwrap
	// and one init, then their end.
	b.Run("warm_box_start", func(b *testing.B) {
		spec := sandbox.Spec{Argv: []string{trueBin}, Workspace: st.ws, TmpDir: st.tmp, Home: st.home}
		for b.Loop() {
			w := st.sb.NewWarm()
			if _, err := w.Run(context.Background(), spec); err != nil {
				b.Fatal(err)
			}
			w.Close()
		}
	})
	// The warm sandbox (what the shell tool uses): one bwrap for the run,
	// one init, each command started by it.
	for _, c := range []struct {
		name string
		spec sandbox.Spec
	}{
		{"warm_argv_true", sandbox.Spec{Argv: []string{trueBin}}},
		{"warm_shell_true", sandbox.Spec{Command: "true"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := st.sb.NewWarm()
			defer w.Close()
			c.spec.Workspace = st.ws
			c.spec.TmpDir, c.spec.Home = st.tmp, st.home
			// The box starts once per run (warm_box_start measures it);
			// start it before the timed loop.
			if _, err := w.Run(context.Background(), c.spec); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				out, err := w.Run(context.Background(), c.spec)
				if err != nil || out.ExitCode != 0 {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}

// BenchmarkProbe measures the canary probe, run at worker start and by
// `aos doctor`.
func BenchmarkProbe(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bwrap not installed")
	}
	sb, err := sandbox.New(sandbox.Config{StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := sb.Probe(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

type benchSetup struct {
	sb            *sandbox.Sandbox
	ws, tmp, home string
}

func newBenchSetup(b *testing.B) benchSetup {
	b.Helper()
	dir := func() string {
		d := b.TempDir()
		return d
	}
	st := benchSetup{ws: dir(), tmp: dir(), home: dir()}
	sb, err := sandbox.New(sandbox.Config{StateDir: dir()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := sb.Probe(context.Background()); err != nil {
		b.Fatal(err)
	}
	st.sb = sb
	return st
}
