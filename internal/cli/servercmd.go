package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/metrics"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/worker"
)

// DefaultAddr is where aos server listens without AOS_ADDR.
const DefaultAddr = "127.0.0.1:8640"

// NewServerCmd returns `aos server`: the HTTP API and the events WebSocket
// on AOS_ADDR. It never runs agent code; it talks to workers only through
// the database.
func NewServerCmd(version string) *cobra.Command {
	var noSetupToken, withControl bool
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Serve the HTTP API (/api/v1) and the events WebSocket on AOS_ADDR (" + DefaultAddr + " by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, err := env(cmd.Context(), os.Stderr)
			if err != nil {
				return err
			}
			addr := cfg.Getenv("AOS_ADDR")
			if addr == "" {
				addr = DefaultAddr
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			st, err := worker.Open(ctx, cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			// One shared event listener serves every socket (api's hub), and
			// it stops while none is open, so a short event poll costs one
			// small query per 10 ms only while someone is watching.
			k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir, Logger: log, Version: version, EventPoll: 10 * time.Millisecond})
			hc, err := startHostConfig(ctx, log)
			if err != nil {
				return err
			}
			defer hc.Close()
			svc := mission.New(k, mission.Options{WorkspaceRoot: cfg.WorkspaceRoot, DataDir: cfg.DataDir, Version: version, Getenv: cfg.Getenv, Logger: log,
				AllowPrivateClones: cfg.Getenv("AOS_CLONE_ALLOW_PRIVATE") == "1", HostConfig: hc})
			// The Store and agent service (seed 000): preparation jobs run in
			// this process under its lease; recovery (at start, then
			// periodically) answers what a dead server left unfinished.
			lease, err := agentLease(cfg.Getenv)
			if err != nil {
				return err
			}
			agents, err := agent.New(agent.Options{Store: st, Missions: svc, WorkspaceRoot: cfg.WorkspaceRoot, DataDir: cfg.DataDir, Getenv: cfg.Getenv, Logger: log, Lease: lease})
			if err != nil {
				return err
			}
			if err := agents.Start(ctx); err != nil {
				return fmt.Errorf("server: recover agent preparations: %w", err)
			}
			defer agents.Wait()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("server: listen on %s: %w", addr, err)
			}
			proxies, err := api.ParseTrustedProxies(cfg.Getenv("AOS_TRUSTED_PROXIES"))
			if err != nil {
				_ = ln.Close()
				return &config.Error{Var: "AOS_TRUSTED_PROXIES", Msg: err.Error()}
			}
			tlsCfg, err := serverTLS(cfg.Getenv)
			if err != nil {
				_ = ln.Close()
				return err
			}
			if withControl {
				stopControl, err := serveControl(ctx, cfg.DataDir, svc, log, version)
				if err != nil {
					_ = ln.Close()
					return err
				}
				defer stopControl()
			}
			sch := "http"
			if tlsCfg != nil {
				ln, sch = tls.NewListener(ln, tlsCfg), "https"
			}
			authSvc, err := newAuth(cfg, st, log, publicOrigin(cfg.Getenv, ln.Addr().String()))
			if err != nil {
				_ = ln.Close()
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: API on %s://%s%s (%s); Ctrl-C to stop\n", banner("aos server", version), sch, ln.Addr(), api.Prefix, st.Dialect())
			if w := plainHTTPWarning(ln.Addr().String(), sch, authSvc.PublicOrigin()); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "aos server: "+w)
				log.Warn("plain HTTP on a non-loopback address", "addr", ln.Addr().String())
			}
			if !noSetupToken {
				if err := printSetupToken(ctx, cmd.OutOrStdout(), authSvc, "server", sch+"://"+ln.Addr().String()); err != nil {
					_ = ln.Close()
					return err
				}
			}
			go pruneAuth(ctx, authSvc, log, 10*time.Minute)
			// Retention (aos settings retentionEventsDays/AuditDays): prunes
			// the events and audit records of long-ended missions, hourly.
			go svc.RunRetention(ctx, time.Hour, log)
			m := metrics.New(metrics.ProcessServer, version)
			m.WatchStore(st)
			return api.Serve(ctx, ln, api.New(svc, api.Options{Logger: log, Auth: authSvc, TrustedProxies: proxies, Metrics: m, Agents: agents,
				Devices: device.New(st, device.Options{Ops: agents, Logger: log})}), log)
		},
	}
	cmd.Flags().BoolVar(&noSetupToken, "no-setup-token", false, "do not issue a setup token on first run (aos up issues it)")
	cmd.Flags().BoolVar(&withControl, "control", false, "also serve the data dir's local control socket (aos up, which owns the data dir, passes it)")
	return cmd
}

// NewTokenCmd returns `aos token create|ls|revoke`: API token management
// by the local administrator, directly on the database.
func NewTokenCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage API tokens (local administrator: works on the database directly)"}
	var name string
	var scopes []string
	var asJSON bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API token; it is printed once and stored only as a hash",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withService(cmd.Context(), func(ctx context.Context, svc *mission.Service) error {
				t, err := svc.CreateToken(ctx, localActor(), name, scopes)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(t)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s\n", t.Secret)
				fmt.Fprintf(cmd.ErrOrStderr(), "token %s (%s) created; it is shown only this once\n", t.ID, strings.Join(t.Scopes, ","))
				return nil
			})
		},
	}
	create.Flags().StringVar(&name, "name", "", "a label for the token")
	create.Flags().StringSliceVar(&scopes, "scope", []string{mission.ScopeRead, mission.ScopeWrite}, "scopes: read, write (write implies read)")
	create.Flags().BoolVar(&asJSON, "json", false, "print the token record and secret as JSON")
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List API tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withService(cmd.Context(), func(ctx context.Context, svc *mission.Service) error {
				ts, err := svc.ListTokens(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(ts)
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tCREATED\tSTATE")
				for _, t := range ts {
					state := "live"
					if t.RevokedAt != 0 {
						state = "revoked " + time.UnixMilli(t.RevokedAt).UTC().Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, strings.Join(t.Scopes, ","), time.UnixMilli(t.CreatedAt).UTC().Format(time.RFC3339), state)
				}
				return tw.Flush()
			})
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API token; its next request is refused",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withService(cmd.Context(), func(ctx context.Context, svc *mission.Service) error {
				if err := svc.RevokeToken(ctx, localActor(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "token %s revoked\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(create, ls, revoke)
	return cmd
}

// withService opens the configured database and runs fn with a service.
func withService(ctx context.Context, fn func(context.Context, *mission.Service) error) error {
	cfg, log, err := env(ctx, os.Stderr)
	if err != nil {
		return err
	}
	st, err := worker.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir, Logger: log})
	return fn(ctx, mission.New(k, mission.Options{WorkspaceRoot: cfg.WorkspaceRoot, Getenv: cfg.Getenv, Logger: log}))
}

// localActor names the administrator at this terminal in the audit log.
func localActor() mission.Actor {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return mission.Actor("cli:" + name)
}

// pruneAuth deletes dead sessions, throttle records and ceremonies now and
// every interval until ctx ends. Several servers may run it at once; the
// deletes are idempotent.
func pruneAuth(ctx context.Context, a *auth.Service, log *slog.Logger, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := a.Prune(ctx); err != nil && ctx.Err() == nil {
			log.Warn("auth prune failed", "err", err.Error())
		} else if n > 0 {
			log.Info("auth pruned", "rows", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// agentLease reads AOS_AGENT_LEASE, how long a server's preparation
// operations stay its own without renewal (agent.DefaultLease when unset).
func agentLease(getenv func(string) string) (time.Duration, error) {
	v := getenv("AOS_AGENT_LEASE")
	if v == "" {
		return agent.DefaultLease, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 300*time.Millisecond || d > time.Hour {
		return 0, &config.Error{Var: "AOS_AGENT_LEASE", Msg: "a duration from 300ms to 1h, like 15s"}
	}
	return d, nil
}
