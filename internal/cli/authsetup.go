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

// printSetupToken issues a setup token while setup is incomplete and
// prints it with the URL to the owner's terminal (out), never to the logs.
func printSetupToken(ctx context.Context, out io.Writer, a *auth.Service, who string) error {
	req, err := a.SetupRequired(ctx)
	if err != nil || !req {
		return err
	}
	tok, exp, err := a.IssueSetupToken(ctx, who)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nFirst run: set up the owner account at %s/ (API: POST %s/auth/setup/begin)\n", a.PublicOrigin(), api.Prefix)
	fmt.Fprintf(out, "  setup token: %s\n  (valid until %s; a new run of the server issues a new one)\n\n", tok, exp.UTC().Format(time.RFC3339))
	return nil
}
