package cli

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/worker"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check this machine: database, sandbox canary probe, git, provider keys (presence only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			ctx := cmd.Context()
			failed := 0
			check := func(name string, ok bool, detail string) {
				mark := "ok  "
				if !ok {
					mark = "FAIL"
					failed++
				}
				fmt.Fprintf(out, "%s %-22s %s\n", mark, name, detail)
			}
			cfg, _, err := env(ctx, os.Stderr)
			if err != nil {
				check("configuration", false, err.Error())
				return &exitError{code: exitFailure, msg: "doctor: configuration is invalid"}
			}
			check("configuration", true, "data dir "+cfg.DataDir)
			start := time.Now()
			st, err := worker.Open(ctx, cfg)
			if err != nil {
				check("database", false, err.Error())
			} else {
				err = st.Ping(ctx)
				check("database", err == nil, fmt.Sprintf("%s, migrated, %s", st.Dialect(), time.Since(start).Round(time.Millisecond)))
				_ = st.Close()
			}
			sb, err := sandbox.New(sandbox.ConfigFromEnv(cfg.Getenv, cfg.DataDir))
			if err != nil {
				check("sandbox", false, err.Error())
			} else {
				rep, err := sb.Probe(ctx)
				switch {
				case err != nil:
					check("sandbox probe", false, err.Error())
				default:
					check("sandbox probe", rep.OK(), fmt.Sprintf("%d checks in %s (details: aos sandbox check)", len(rep.Checks), rep.Duration.Round(time.Millisecond)))
				}
			}
			_, err = exec.LookPath("git")
			check("git", err == nil, "needed for missions on git projects")
			for _, k := range []string{provider.EnvAnthropicKey, provider.EnvOpenAIKey} {
				fmt.Fprintf(out, "info %-22s %s\n", k, map[bool]string{true: "set", false: "not set"}[cfg.Getenv(k) != ""])
			}
			if failed > 0 {
				return &exitError{code: exitFailure, msg: fmt.Sprintf("doctor: %d check(s) failed", failed)}
			}
			return nil
		},
	}
}
