// Package cli holds aos's commands: parsing, output and exit codes. It
// holds no business rules; those live in the packages it calls.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/aos-run/aos/internal/backend"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/sandbox"
)

// NewRootCmd returns the aos command tree over the process: its
// environment, config dir, host name and terminal. This is the one place
// aos reads the process environment (os.Getenv); every command takes it
// from its context (envFrom), and every package below takes it as a
// parameter (config.Config.Env, Getenv fields). internal/layering's
// TestEnvironmentReadAtTheEdge keeps it so.
func NewRootCmd(version string) *cobra.Command {
	return newRootCmd(version, osClientEnv())
}

func osClientEnv() *clientEnv {
	return &clientEnv{getenv: os.Getenv, configDir: os.UserConfigDir, hostname: os.Hostname, stdin: os.Stdin,
		tty: isTTY(os.Stdin), readSecret: func() (string, error) { return readSecret(os.Stdin) }}
}

// envKey is the context key of the environment the commands read.
type envKey struct{}

// withEnv returns ctx carrying getenv as the environment commands read.
func withEnv(ctx context.Context, getenv func(string) string) context.Context {
	return context.WithValue(ctx, envKey{}, getenv)
}

// envFrom returns the environment ctx carries (withEnv), or an empty one:
// never the process's, which only the root reads.
func envFrom(ctx context.Context) func(string) string {
	if ctx != nil {
		if e, ok := ctx.Value(envKey{}).(func(string) string); ok && e != nil {
			return e
		}
	}
	return func(string) string { return "" }
}

// newRootCmd returns the command tree with the client commands bound to e.
func newRootCmd(version string, e *clientEnv) *cobra.Command {
	root := &cobra.Command{
		Use:   "aos",
		Short: "aos runs coding-agent missions durably and safely",
		Long: `aos runs coding-agent missions durably and safely.

The API client commands (login, mission, waits, approve, deny, answer,
project, policy, spend, models, status) exit 2 on bad usage or input, 3 when
not logged in or refused (401/403), 4 when not found, 5 when the server is
unreachable, and 1 otherwise; see docs/CLI.md.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		// Every command reads the environment from its context: e's,
		// unless the caller (a test) put one there already.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			if cmd.Context() == nil || cmd.Context().Value(envKey{}) == nil {
				ctx := cmd.Context()
				if ctx == nil {
					ctx = context.Background()
				}
				cmd.SetContext(withEnv(ctx, e.getenv))
			}
		},
	}
	root.AddCommand(
		newMigrateCmd(),
		newWorkerCmd(version),
		newUpCmd(version),
		newSelfTestCmd(version),
		NewDevCmd(),
		NewSandboxCmd(version),
		newRunCmd(version),
		newEngineCmd(version),
		newResumeCmd(version),
		newDemoCmd(version),
		e.newWaitsCmd(),
		newDoctorCmd(),
		NewServerCmd(version),
		NewTokenCmd(),
		newSettingsCmd(),
		newConfigCmd(),
		newIntegrateCmd(),
		e.newResolveCmd("approve"),
		e.newResolveCmd("deny"),
		e.newResolveCmd("answer"),
		e.newLoginCmd(),
		e.newSetupCmd(),
		e.newLogoutCmd(),
		e.newMissionCmd(),
		e.newProjectCmd(),
		e.newDeviceCmd(),
		e.newPolicyCmd(),
		e.newSpendCmd(),
		e.newInboxCmd(),
		e.newModelsCmd(),
		e.newStatusCmd(),
		e.newStoreCmd(),
		e.newPackageCmd(),
		e.newAgentCmd(),
		e.newOperationCmd(),
	)
	// Bad flags are usage errors (exit 2), like bad arguments.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage("%v", err) })
	return root
}

// Execute runs the command tree and returns the process exit code. Errors
// print as one line on stderr.
func Execute(version string) int {
	if len(os.Args) > 1 && os.Args[1] == backend.ForwarderArg {
		// The in-sandbox half of an external engine's model proxy.
		return backend.ForwarderMain(os.Args[2:])
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg {
		// The warm sandbox's init, inside bwrap (docs/SANDBOX.md).
		return sandbox.InitMain(os.Args[2:])
	}
	return int(execute(context.Background(), NewRootCmd(version), os.Stderr))
}

// execute runs cmd and returns the exit code, printing an error as one
// line "aos: <reason>" on stderr.
func execute(ctx context.Context, cmd *cobra.Command, stderr io.Writer) exitCode {
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "aos:", oneLine(err.Error(), 500))
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return exitCode(ec.ExitCode())
	}
	// cobra's own refusals (an unknown command, a flag group) are usage
	// errors; cobra has no error type for them.
	for _, p := range []string{"unknown command", "unknown flag", "if any flags in the group", "at least one of the flags", "required flag"} {
		if strings.HasPrefix(err.Error(), p) {
			return exitUsage
		}
	}
	return exitFailure
}

// env loads the configuration from ctx's environment (envFrom) and a
// logger that writes JSON lines to w.
func env(ctx context.Context, w io.Writer) (config.Config, *slog.Logger, error) {
	cfg, err := config.FromEnv(envFrom(ctx))
	if err != nil {
		return cfg, nil, err
	}
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.LogLevel))
	return cfg, slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

// signalContext is cancelled on SIGINT or SIGTERM.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
}

// banner is what a long-running command calls itself when it starts:
// "aos up", or "aos up (version 1.2.0)" for a release build. A development
// build's version, "dev", is left out: "aos dev up" reads as another
// command.
func banner(what, version string) string {
	if version == "" || version == "dev" {
		return what
	}
	return what + " (version " + version + ")"
}
