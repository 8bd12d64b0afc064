package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/store"
)

// publicOrigin is AOS_PUBLIC_ORIGIN, or <scheme>://<listen addr>.
func publicOrigin(getenv func(string) string, addr string) string {
	if o := getenv("AOS_PUBLIC_ORIGIN"); o != "" {
		return o
	}
	return scheme(getenv) + "://" + addr
}

// newAuth returns the owner-security service over st for a server whose
// browsers use origin.
func newAuth(cfg config.Config, st store.Store, log *slog.Logger, origin string) (*auth.Service, error) {
	key, err := auth.LoadKey(cfg.Getenv, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	idle, abs, err := sessionTimeouts(cfg.Getenv)
	if err != nil {
		return nil, err
	}
	return auth.New(st, auth.Options{PublicOrigin: origin, Key: key, Logger: log, IdleTimeout: idle, AbsoluteTimeout: abs})
}

// sessionTimeouts reads AOS_SESSION_IDLE and AOS_SESSION_MAX (Go
// durations such as 8h or 336h; unset keeps auth's defaults, 24 h and 14
// days). Each must be at least 5 minutes, and idle at most max.
func sessionTimeouts(getenv func(string) string) (idle, abs time.Duration, err error) {
	read := func(name string) (time.Duration, error) {
		v := getenv(name)
		if v == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Minute {
			return 0, &config.Error{Var: name, Msg: "must be a duration of at least 5m, such as 8h"}
		}
		return d, nil
	}
	if idle, err = read("AOS_SESSION_IDLE"); err != nil {
		return 0, 0, err
	}
	if abs, err = read("AOS_SESSION_MAX"); err != nil {
		return 0, 0, err
	}
	effIdle, effAbs := idle, abs
	if effIdle == 0 {
		effIdle = auth.DefaultIdleTimeout
	}
	if effAbs == 0 {
		effAbs = auth.DefaultAbsoluteTimeout
	}
	if effIdle > effAbs {
		return 0, 0, &config.Error{Var: "AOS_SESSION_IDLE", Msg: "must not exceed AOS_SESSION_MAX (" + effAbs.String() + ")"}
	}
	return idle, abs, nil
}

// printSetupToken tells the owner's terminal (out, never the logs) how to
// reach the server at serverURL from the CLI: while setup is incomplete it
// issues a setup token, prints it and points to aos setup; afterwards it
// points to aos login.
func printSetupToken(ctx context.Context, out io.Writer, a *auth.Service, who, serverURL string) error {
	req, err := a.SetupRequired(ctx)
	if err != nil {
		return err
	}
	if !req {
		fmt.Fprintf(out, "Open the console at %s/ or log in from a client: aos login --server %s\n", a.PublicOrigin(), serverURL)
		return nil
	}
	tok, exp, err := a.IssueSetupToken(ctx, who)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nFirst run: open %s/setup/ in a browser and paste the setup token below,\n", a.PublicOrigin())
	fmt.Fprintf(out, "  or create the owner account from a terminal: aos setup --server %s\n", serverURL)
	fmt.Fprintf(out, "  (or over the API: POST %s/auth/setup/begin, then /auth/setup/complete)\n", api.Prefix)
	fmt.Fprintf(out, "  setup token: %s\n  (valid until %s; a new run of the server issues a new one)\n\n", tok, exp.UTC().Format(time.RFC3339))
	return nil
}
