package cli

import (
	"context"
	"log/slog"

	"github.com/aos-run/aos/internal/control"
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
	srv, err := control.New(control.Options{Service: svc, Commands: cmds, Integrations: integrations, Logger: log, Version: version})
	if err != nil {
		return nil, err
	}
	ln, err := control.Listen(dataDir)
	if err != nil {
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
	return func() { cancel(); <-done }, nil
}
