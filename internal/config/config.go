// Package config reads aos's environment: where the data lives, which
// database to use, and the worker's limits. API keys are not read here;
// providers read them from the environment themselves, so they never pass
// through configuration structs that might be logged.
package config

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
)

// Config is the process environment, resolved.
type Config struct {
	// DataDir holds the SQLite database, artifacts and host state.
	DataDir string
	// DatabaseURL is postgres://… for scale-out; empty means SQLite in
	// DataDir.
	DatabaseURL string
	// WorkspaceRoot confines every project path.
	WorkspaceRoot string
	// MaxConcurrentRuns is per worker.
	MaxConcurrentRuns int
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// WorkerID names this worker in leases; hostname-pid when empty.
	WorkerID string
	// MetricsAddr is where a worker serves its metrics (AOS_METRICS_ADDR,
	// host:port; a port alone, ":9464", binds 127.0.0.1); empty serves
	// none. Only loopback peers are answered.
	MetricsAddr string
	// Env is the environment this Config was read from. Packages below the
	// CLI read further variables (provider keys, sandbox limits) through
	// it and never from the process: the CLI's root reads the process
	// environment, in one place, and tests pass their own.
	Env func(string) string `json:"-"`
}

// Error is a configuration problem, naming the variable.
type Error struct {
	Var string
	Msg string
}

func (e *Error) Error() string { return "config: " + e.Var + ": " + e.Msg }

// FromEnv reads the configuration from getenv (the CLI root passes the
// process environment's); the result carries getenv as Env.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Env:           getenv,
		DataDir:       getenv("AOS_DATA_DIR"),
		DatabaseURL:   getenv("AOS_DATABASE_URL"),
		WorkspaceRoot: getenv("AOS_WORKSPACE_ROOT"),
		LogLevel:      getenv("AOS_LOG_LEVEL"),
		WorkerID:      getenv("AOS_WORKER_ID"),
	}
	if c.DataDir == "" {
		base := getenv("XDG_DATA_HOME")
		if base == "" {
			home := getenv("HOME")
			if home == "" {
				return c, &Error{Var: "AOS_DATA_DIR", Msg: "unset, and no home directory (HOME) to default to"}
			}
			base = filepath.Join(home, ".local", "share")
		}
		c.DataDir = filepath.Join(base, "aos")
	}
	if c.WorkspaceRoot == "" {
		// Beside the data dir, never inside it: the sandbox hides the data
		// dir (database, artifacts) from every command.
		c.WorkspaceRoot = filepath.Join(filepath.Dir(c.DataDir), "aos-workspaces")
	}
	c.MaxConcurrentRuns = 4
	if v := getenv("AOS_MAX_CONCURRENT_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 256 {
			return c, &Error{Var: "AOS_MAX_CONCURRENT_RUNS", Msg: fmt.Sprintf("want an integer 1..256, got %q", v)}
		}
		c.MaxConcurrentRuns = n
	}
	if v := getenv("AOS_METRICS_ADDR"); v != "" {
		host, port, err := net.SplitHostPort(v)
		if err != nil || port == "" {
			return c, &Error{Var: "AOS_METRICS_ADDR", Msg: fmt.Sprintf("want host:port or :port, got %q", v)}
		}
		if host == "" {
			host = "127.0.0.1"
		}
		c.MetricsAddr = net.JoinHostPort(host, port)
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return c, &Error{Var: "AOS_LOG_LEVEL", Msg: fmt.Sprintf("want debug, info, warn or error, got %q", c.LogLevel)}
	}
	if c.DatabaseURL != "" && !(len(c.DatabaseURL) > 11 && (c.DatabaseURL[:11] == "postgres://" || len(c.DatabaseURL) > 13 && c.DatabaseURL[:13] == "postgresql://")) {
		return c, &Error{Var: "AOS_DATABASE_URL", Msg: "must be a postgres:// URL (unset it to use the embedded SQLite)"}
	}
	return c, nil
}

// Getenv reads name from the environment c was read from (Env); "" when c
// has none (a Config built by hand, in a test).
func (c Config) Getenv(name string) string {
	if c.Env == nil {
		return ""
	}
	return c.Env(name)
}
