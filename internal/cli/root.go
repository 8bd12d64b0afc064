// Package cli holds aos's commands: parsing, output and exit codes. It
// holds no business rules; those live in the packages it calls.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/config"
)

// NewRootCmd returns the aos command tree.
func NewRootCmd(version string) *cobra.Command {
	root := &cobra.Command{
		Use:           "aos",
		Short:         "aos runs coding-agent missions durably and safely",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(
		newMigrateCmd(),
		newWorkerCmd(version),
		newUpCmd(version),
		newSelfTestCmd(version),
		NewDevCmd(),
		NewSandboxCmd(),
		newRunCmd(version),
		newResumeCmd(version),
		newDemoCmd(version),
		newWaitsCmd(),
		newDoctorCmd(),
		NewServerCmd(version),
		NewTokenCmd(),
		newSettingsCmd(),
		newResolveCmd("approve"),
		newResolveCmd("deny"),
		newResolveCmd("answer"),
	)
	return root
}

// Execute runs the command tree and returns the process exit code. Errors
// print as one line on stderr.
func Execute(version string) int {
	cmd := NewRootCmd(version)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "aos:", err)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
	return 0
}

// env loads the configuration and a logger that writes JSON lines to w.
func env(w io.Writer) (config.Config, *slog.Logger, error) {
	cfg, err := config.FromEnv(os.Getenv)
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
