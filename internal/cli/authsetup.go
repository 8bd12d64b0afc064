package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/store"
)

// publicOrigin is AOS_PUBLIC_ORIGIN, or http://<listen addr>.
func publicOrigin(addr string) string {
	if o := os.Getenv("AOS_PUBLIC_ORIGIN"); o != "" {
		return o
	}
	return "http://" + addr
}

// newAuth returns the owner-security service over st for a server whose
// browsers use origin.
func newAuth(cfg config.Config, st store.Store, log *slog.Logger, origin string) (*auth.Service, error) {
	key, err := auth.LoadKey(os.Getenv, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	return auth.New(st, auth.Options{PublicOrigin: origin, Key: key, Logger: log})
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
		fmt.Fprintf(out, "Log in from a client: aos login --server %s\n", serverURL)
		return nil
	}
	tok, exp, err := a.IssueSetupToken(ctx, who)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nFirst run: create the owner account from a terminal: aos setup --server %s\n", serverURL)
	fmt.Fprintf(out, "  (or over the API: POST %s/auth/setup/begin, then /auth/setup/complete)\n", api.Prefix)
	fmt.Fprintf(out, "  setup token: %s\n  (valid until %s; a new run of the server issues a new one)\n\n", tok, exp.UTC().Format(time.RFC3339))
	return nil
}
