package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/sandbox"
)

// NewSandboxCmd returns the "sandbox" command group: "sandbox check" runs
// the canary probe and "sandbox exec" runs one command under exactly the
// confinement the shell tool uses. Its hidden "probe-child" subcommand is
// the probe's inside half and must stay registered for the probe to work.
func NewSandboxCmd(version string) *cobra.Command {
	return newSandboxCmd(os.Exit, version)
}

// sandboxFlags are the settings shared by check and exec.
type sandboxFlags struct {
	dataDir  string
	denyRead []string
	version  string // aos's, part of the probe cache's key
}

func (f *sandboxFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dataDir, "data-dir", "", "aos data dir, hidden from commands (default $AOS_DATA_DIR)")
	cmd.Flags().StringSliceVar(&f.denyRead, "deny-read", nil, "more absolute paths commands must not read (also $AOS_SANDBOX_EXTRA_DENY_READ, comma-separated)")
}

// probeCache is where the canary probe's passing verdict is kept: the
// data dir (--data-dir, else aos's default data dir).
func (f *sandboxFlags) probeCache(getenv func(string) string) sandbox.ProbeCache {
	dir := f.dataDir
	if dir == "" {
		if c, err := config.FromEnv(getenv); err == nil {
			dir = c.DataDir
		}
	}
	return sandbox.ProbeCache{Path: sandbox.ProbeCachePath(dir), Version: f.version}
}

// config returns the sandbox configuration from getenv and the flags.
func (f *sandboxFlags) config(getenv func(string) string) sandbox.Config {
	dataDir := f.dataDir
	if dataDir == "" {
		dataDir = getenv("AOS_DATA_DIR")
	}
	c := sandbox.ConfigFromEnv(getenv, dataDir)
	c.ExtraDenyRead = append(c.ExtraDenyRead, f.denyRead...)
	return c
}

func newSandboxCmd(exit func(int), version string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Check and use the command sandbox (bubblewrap)",
		Long: `aos runs the agent's shell commands under bubblewrap with a seccomp filter
(docs/SANDBOX.md). "aos sandbox check" proves the confinement works on this
machine; "aos sandbox exec" runs one command under it, for debugging.`,
	}
	cmd.AddCommand(newSandboxCheckCmd(version), newSandboxExecCmd(exit, version), newSandboxProbeChildCmd(exit))
	return cmd
}

func newSandboxCheckCmd(version string) *cobra.Command {
	f := sandboxFlags{version: version}
	var fresh bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Run the canary probe and print each check",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sb, err := sandbox.New(f.config(envFrom(cmd.Context())))
			if err != nil {
				return err
			}
			ctx, stop := cmdContext(cmd)
			defer stop()
			pc := f.probeCache(envFrom(cmd.Context()))
			if fresh {
				pc.Path = ""
			}
			r, cached, perr := sb.ProbeCached(ctx, pc)
			out := cmd.OutOrStdout()
			for _, c := range r.Checks {
				mark := "PASS"
				if !c.OK {
					mark = "FAIL"
				}
				fmt.Fprintf(out, "%s  %-30s %s\n", mark, c.Name, c.Detail)
			}
			if perr != nil {
				var ue *sandbox.UnavailableError
				if errors.As(perr, &ue) {
					fmt.Fprintf(out, "\nsandbox unavailable: %s\nfix: %s\n", ue.Reason, ue.Fix)
				}
				return perr
			}
			if cached {
				fmt.Fprintf(out, "\nsandbox ok: %d checks passed (a verdict cached less than %s ago; --fresh runs the probe again)\n", len(r.Checks), sandbox.DefaultProbeCacheTTL)
				return nil
			}
			fmt.Fprintf(out, "\nsandbox ok: %d checks passed in %s\n", len(r.Checks), r.Duration.Round(time.Millisecond))
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&fresh, "fresh", false, "run the probe even when a recent passing verdict is cached")
	return cmd
}

func newSandboxExecCmd(exit func(int), version string) *cobra.Command {
	var (
		f         = sandboxFlags{version: version}
		network   string
		workspace string
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "exec [--network none|open] [--workspace DIR] -- ARGV...",
		Short: "Run one command under the shell tool's confinement",
		Long: `Run ARGV under exactly the confinement the shell tool uses and exit with its
exit code. The workspace (default: the current directory) and a fresh TMPDIR
and HOME are writable; everything else is read-only, protected paths are
hidden, and with --network none (the default) there is no network.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if workspace == "" {
				wd, err := os.Getwd()
				if err != nil {
					return fmt.Errorf("sandbox exec: working directory: %w", err)
				}
				if workspace, err = filepath.EvalSymlinks(wd); err != nil {
					return fmt.Errorf("sandbox exec: resolve working directory: %w", err)
				}
			} else if abs, err := filepath.Abs(workspace); err == nil {
				workspace = abs
			}
			sb, err := sandbox.New(f.config(envFrom(cmd.Context())))
			if err != nil {
				return err
			}
			ctx, stop := cmdContext(cmd)
			defer stop()
			// Admission: a recent passing verdict, or the probe now.
			if _, _, err := sb.ProbeCached(ctx, f.probeCache(envFrom(cmd.Context()))); err != nil {
				return err
			}
			out, err := sb.Run(ctx, sandbox.Spec{
				Argv: args, Workspace: workspace, Network: sandbox.Network(network), Timeout: timeout,
			})
			if err != nil {
				return err
			}
			_, _ = cmd.OutOrStdout().Write(out.Output)
			for _, note := range []struct {
				on   bool
				text string
			}{{out.TimedOut, "timed out"}, {out.OutputExceeded, "output exceeded the cap; killed"}, {out.Cancelled, "cancelled"}} {
				if note.on {
					fmt.Fprintf(cmd.ErrOrStderr(), "aos sandbox: %s\n", note.text)
				}
			}
			if out.ExitCode != 0 {
				code := out.ExitCode
				if code < 0 {
					code = 128 + 9
				}
				stop()
				exit(code)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&network, "network", string(sandbox.NetworkNone), "network mode: none or open")
	cmd.Flags().StringVar(&workspace, "workspace", "", "writable working directory (default: the current directory)")
	cmd.Flags().DurationVar(&timeout, "timeout", sandbox.DefaultTimeout, "kill the command after this long")
	return cmd
}

func newSandboxProbeChildCmd(exit func(int)) *cobra.Command {
	return &cobra.Command{
		Use:                "probe-child",
		Short:              "The canary probe's inside half (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			exit(sandbox.ProbeChildMain(args))
			return nil
		},
	}
}

// cmdContext is the command's context, cancelled on SIGINT or SIGTERM
// until stop is called.
func cmdContext(cmd *cobra.Command) (ctx context.Context, stop func()) {
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}
