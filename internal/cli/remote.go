package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/termtext"
)

// clientEnv is what the client commands take from the process: the
// environment, the config directory, stdin and the terminal. Tests pass
// their own.
type clientEnv struct {
	getenv    func(string) string
	configDir func() (string, error)
	hostname  func() (string, error)
	stdin     io.Reader
	// tty reports whether stdin is a terminal; readSecret reads a line
	// from it without echo.
	tty        bool
	readSecret func() (string, error)
	// transport is the HTTP transport (nil: the default).
	transport http.RoundTripper
	// followBackoff is the first reconnect delay of watch (0: 100 ms).
	followBackoff time.Duration
}

func osClientEnv() *clientEnv {
	return &clientEnv{getenv: os.Getenv, configDir: os.UserConfigDir, hostname: os.Hostname, stdin: os.Stdin,
		tty: isTTY(os.Stdin), readSecret: func() (string, error) { return readSecret(os.Stdin) }}
}

// target is the server and token the commands use: the stored
// credentials, each overridden by AOS_SERVER / AOS_TOKEN.
func (e *clientEnv) target() (credentials, error) {
	c, err := e.loadCredentials()
	if err != nil {
		return c, err
	}
	if s := e.getenv("AOS_SERVER"); s != "" {
		if s != c.Server {
			c.TokenID = ""
		}
		c.Server = s
	}
	if t := e.getenv("AOS_TOKEN"); t != "" {
		c.Token, c.TokenID = t, ""
	}
	return c, nil
}

// remoteConfigured says whether a server is configured (stored
// credentials or AOS_SERVER): aos waits/approve/deny/answer then use the
// API instead of the local database.
func (e *clientEnv) remoteConfigured() (bool, error) {
	c, err := e.target()
	return c.Server != "", err
}

// client returns an API client of the configured server.
func (e *clientEnv) client() (*client.Client, error) {
	c, err := e.target()
	if err != nil {
		return nil, err
	}
	if c.Server == "" || c.Token == "" {
		return nil, &exitError{code: exitAuth, msg: "not logged in: run aos login --server URL (or set AOS_SERVER and AOS_TOKEN)"}
	}
	cl, err := client.New(c.Server, c.Token, client.Options{Transport: e.transport})
	if err != nil {
		return nil, classify(err)
	}
	return cl, nil
}

// classify gives an error of the client its exit code and a one-line
// reason; other errors pass unchanged.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	var ue *client.UnreachableError
	if errors.As(err, &ue) {
		return &exitError{code: exitUnreachable, msg: "server " + ue.Server + " unreachable: " + oneLine(ue.Err.Error(), 200)}
	}
	if ce, ok := client.AsError(err); ok {
		msg := ce.Message
		if msg == "" {
			msg = http.StatusText(ce.Status)
		}
		msg = oneLine(msg, 300)
		switch {
		case ce.Code == client.CodeBadServer:
			return &exitError{code: exitUsage, msg: msg}
		case ce.IsAuth():
			return &exitError{code: exitAuth, msg: fmt.Sprintf("not authorized (%s): %s; run aos login", ce.Code, msg)}
		case ce.IsNotFound():
			return &exitError{code: exitNotFound, msg: "not found: " + msg}
		case ce.Status == http.StatusBadRequest:
			return &exitError{code: exitUsage, msg: "invalid input: " + msg}
		case ce.Code == string(mission.CodeDailyCap):
			return &exitError{code: exitUnfinished, msg: msg}
		}
		if ce.Guidance != "" {
			msg += " (" + oneLine(ce.Guidance, 300) + ")"
		}
		return &exitError{code: exitFailure, msg: fmt.Sprintf("%s: %s (HTTP %d)", ce.Code, msg, ce.Status)}
	}
	if errors.Is(err, context.Canceled) {
		return &exitError{code: exitCancelled, msg: "interrupted"}
	}
	return err
}

// usage is a usage error (exit 2).
func usage(format string, a ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, a...)}
}

// argsUsage makes a positional-argument check fail with exit code 2.
func argsUsage(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usage("%s (usage: %s)", err, cmd.UseLine())
		}
		return nil
	}
}

// remoteRunE runs fn with a client of the configured server, giving its
// errors their exit codes.
func (e *clientEnv) remoteRunE(fn func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := e.client()
		if err != nil {
			return err
		}
		return classify(fn(cmd.Context(), cmd, c, args))
	}
}

// printJSON prints v as indented JSON. encoding/json escapes C0 controls
// and U+2028/2029; termtext.JSON escapes the C1, bidi and format
// characters it leaves raw, so the output is safe on a terminal too.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termtext.JSON(b), '\n'))
	return err
}

// money formats dollars as $0.0000.
func money(usd float64) string { return fmt.Sprintf("$%.4f", usd) }

// when formats a Unix-millisecond time (empty for 0).
func when(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
}

// orDash shows an empty value as "-".
func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
