package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/clients"
	"github.com/aos-run/aos/internal/hostconfig"
)

// TestClientManagerFromUserConfig: the client programs of the user-local
// config file become the daemon's client manager, with only the display
// variables of its environment (never a provider key); no file, or no
// clients in it, is no manager.
func TestClientManagerFromUserConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out := filepath.Join(home, "env.txt")
	env := map[string]string{"HOME": home, "PATH": "/usr/bin:/bin", "DISPLAY": ":7", "ANTHROPIC_API_KEY": "sk-ant-SECRET"}
	ctx := withEnv(context.Background(), func(k string) string { return env[k] })
	if m, err := clientManager(ctx, nil); err != nil || m != nil {
		t.Fatalf("no user file: %v %v", m, err)
	}
	cfg := filepath.Join(home, ".config", "aos", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	script := "env > " + out + "; echo ready; exec cat >/dev/null"
	if err := os.WriteFile(cfg, []byte("version: 1\nclients:\n  - kind: viewer\n    argv: [/bin/sh, -c, '"+script+"']\n    restart: never\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := clientManager(ctx, nil)
	if err != nil || m == nil {
		t.Fatalf("declared clients: %v %v", m, err)
	}
	t.Cleanup(m.Close)
	if _, err := m.Start("viewer"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for m.Status()[0].State != clients.StateConnected {
		if time.Now().After(deadline) {
			t.Fatalf("viewer not connected: %+v", m.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "DISPLAY=:7") || strings.Contains(string(b), "SECRET") {
		t.Errorf("the client's environment:\n%s", b)
	}
}

// TestClientManagerRefusesAFIFO: a FIFO at the user-local config path (no
// writer will ever come) is refused at once with hostconfig's typed error,
// instead of blocking the daemon's start in open(2).
func TestClientManagerRefusesAFIFO(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "aos", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	// A reader blocked in open(2) is released when a writer opens the
	// FIFO, so that a failing run leaks no goroutine.
	t.Cleanup(func() {
		if f, err := os.OpenFile(cfg, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})
	ctx := withEnv(context.Background(), func(k string) string { return map[string]string{"HOME": home}[k] })
	type result struct {
		m   *clients.Manager
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := clientManager(ctx, nil)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		var he *hostconfig.Error
		if r.m != nil || !errors.As(r.err, &he) || he.File != cfg || !strings.Contains(he.Msg, "not a regular file") {
			t.Fatalf("a FIFO as the user config: %v, %v; want a hostconfig.Error naming %s", r.m, r.err, cfg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("clientManager still blocked after 10s on a FIFO at the user config path")
	}
}
