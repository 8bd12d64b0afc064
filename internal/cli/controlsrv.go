package cli

import (
	"context"
	"log/slog"

	"github.com/aos-run/aos/internal/clients"
	"github.com/aos-run/aos/internal/control"
	"github.com/aos-run/aos/internal/hostconfig"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/mission"
)

// serveControl serves the data dir's local control socket (seed 002 S11)
// with svc until ctx ends or stop is called (stop waits for it). Only the
// server that aos up runs calls it: aos up's device singleton makes it the
// socket's one owner.
func serveControl(ctx context.Context, dataDir string, svc *mission.Service, log *slog.Logger, version string) (stop func(), err error) {
	cmds, err := hoststate.Open(hostStateDir(dataDir), "control-commands", hoststate.Hooks{})
	if err != nil {
		return nil, err
	}
	integrations, err := hoststate.Open(hostStateDir(dataDir), "integrations", hoststate.Hooks{})
	if err != nil {
		return nil, err
	}
	cm, err := clientManager(ctx, log)
	if err != nil {
		return nil, err
	}
	closeClients := func() {
		if cm != nil {
			cm.Close()
		}
	}
	srv, err := control.New(control.Options{Service: svc, Commands: cmds, Integrations: integrations, Clients: cm, Logger: log, Version: version})
	if err != nil {
		closeClients()
		return nil, err
	}
	ln, err := control.Listen(dataDir)
	if err != nil {
		closeClients()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("control socket stopped", "err", err.Error())
		}
	}()
	return func() { cancel(); <-done; closeClients() }, nil
}

// clientEnvVars are the variables a client program gets from the daemon's
// environment: what a desktop program needs to run and show itself, never
// a provider key.
var clientEnvVars = []string{"PATH", "HOME", "LANG", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"}

// clientManager returns the manager of the client programs the user-local
// config file declares (clients:), or nil when it declares none. Nothing
// is started until a client.start or client.detail asks.
func clientManager(ctx context.Context, log *slog.Logger) (*clients.Manager, error) {
	getenv := envFrom(ctx)
	path, err := hostconfig.UserPath(getenv)
	if err != nil {
		return nil, nil // no home: no user-local file
	}
	uf, err := hostconfig.LoadUser(path)
	if err != nil || uf == nil {
		return nil, err
	}
	if len(uf.Clients) == 0 {
		return nil, nil
	}
	specs := make([]clients.Spec, 0, len(uf.Clients))
	for _, c := range uf.Clients {
		specs = append(specs, clients.Spec{Kind: c.Kind, Argv: c.Argv, Restart: c.Restart, MaxRestarts: c.MaxRestarts, DetailTo: c.DetailTo})
	}
	var env []string
	for _, k := range clientEnvVars {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return clients.New(specs, clients.Options{Env: env, Logger: log})
}
