package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
)

// maxTokenLen bounds a token read from stdin.
const maxTokenLen = 4096

func (e *clientEnv) newLoginCmd() *cobra.Command {
	var server string
	var tokenStdin bool
	cmd := &cobra.Command{
		Use:   "login --server URL [--token-stdin]",
		Short: "Log in to an aos server and store its URL and a token (0600) for the client commands",
		Long: `Log in to an aos server. The server URL and an API token are stored in
<user config dir>/aos/credentials.json (mode 0600, directory 0700);
AOS_SERVER and AOS_TOKEN override them.

With --token-stdin, a token (from aos token create on the server host) is read from stdin and checked with GET /system/status before
it is saved. Without it, on a terminal, aos asks for the owner's password
(no echo) and TOTP code, opens a session, mints a read+write token named
cli@<hostname> and closes the session.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if server == "" {
				t, err := e.target()
				if err != nil {
					return err
				}
				server = t.Server
			}
			if server == "" {
				return usage("--server URL is required (or AOS_SERVER)")
			}
			anon, err := client.New(server, "", client.Options{Transport: e.transport})
			if err != nil {
				return classify(err)
			}
			var creds credentials
			if tokenStdin {
				creds, err = e.tokenFromStdin(ctx, anon)
			} else {
				creds, err = e.interactiveLogin(ctx, cmd, anon)
			}
			if err != nil {
				return err
			}
			path, err := e.saveCredentials(creds)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s (credentials in %s)\n", creds.Server, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server's URL, e.g. http://127.0.0.1:8640 (default: AOS_SERVER or the stored one)")
	cmd.Flags().BoolVar(&tokenStdin, "token-stdin", false, "read an API token from stdin instead of logging in with password and TOTP")
	return cmd
}

// tokenFromStdin reads a token and checks it against the server; a token
// the server refuses is not saved.
func (e *clientEnv) tokenFromStdin(ctx context.Context, anon *client.Client) (credentials, error) {
	b, err := io.ReadAll(io.LimitReader(e.stdin, maxTokenLen+1))
	if err != nil {
		return credentials{}, fmt.Errorf("read the token from stdin: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" || len(token) > maxTokenLen || strings.ContainsAny(token, " \t\r\n") {
		return credentials{}, usage("stdin must hold one token (one line)")
	}
	c := anon.WithToken(token)
	if _, err := c.Status(ctx); err != nil {
		if ce, ok := client.AsError(err); ok && ce.IsAuth() {
			return credentials{}, &exitError{code: exitAuth, msg: "the server refused the token (" + ce.Code + "); nothing was saved"}
		}
		return credentials{}, classify(err)
	}
	return credentials{Server: anon.Server(), Token: token}, nil
}

// interactiveLogin asks for the password and TOTP code, and trades a
// session for a token (POST /auth/login, POST /tokens, POST /auth/logout).
func (e *clientEnv) interactiveLogin(ctx context.Context, cmd *cobra.Command, anon *client.Client) (credentials, error) {
	if !e.tty {
		return credentials{}, usage("stdin is not a terminal: pipe a token to aos login --token-stdin")
	}
	errOut := cmd.ErrOrStderr()
	fmt.Fprint(errOut, "password: ")
	password, err := e.readSecret()
	fmt.Fprintln(errOut)
	if err != nil {
		return credentials{}, fmt.Errorf("read the password: %w", err)
	}
	fmt.Fprint(errOut, "TOTP code: ")
	totp, err := readLine(e.stdin)
	if err != nil {
		return credentials{}, fmt.Errorf("read the TOTP code: %w", err)
	}
	sess, err := anon.Login(ctx, password, strings.TrimSpace(totp))
	if err != nil {
		if ce, ok := client.AsError(err); ok && ce.IsAuth() {
			return credentials{}, &exitError{code: exitAuth, msg: "login refused: wrong password or TOTP code"}
		}
		return credentials{}, classify(err)
	}
	return e.mintToken(ctx, errOut, anon, sess)
}

// mintToken trades a session for a read+write token named cli@<hostname>
// (POST /tokens) and ends the session (POST /auth/logout) either way.
func (e *clientEnv) mintToken(ctx context.Context, errOut io.Writer, anon *client.Client, sess *client.Session) (credentials, error) {
	host, _ := e.hostname()
	if host == "" {
		host = "unknown"
	}
	tok, err := anon.CreateToken(ctx, sess, client.CreateTokenRequest{Name: "cli@" + host, Scopes: []string{"read", "write"}})
	// The session was only needed to mint the token: end it either way.
	if lerr := anon.Logout(context.WithoutCancel(ctx), sess); lerr != nil && err == nil {
		fmt.Fprintf(errOut, "aos: warning: closing the login session failed: %v\n", classify(lerr))
	}
	if err != nil {
		return credentials{}, classify(err)
	}
	return credentials{Server: anon.Server(), Token: tok.Token, TokenID: tok.ID}, nil
}

func (e *clientEnv) newLogoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Revoke the stored token on the server and forget the credentials",
		Long: `Revoke the stored API token on the server (DELETE /tokens/current) and
delete the stored credentials. If the server cannot be reached, the
credentials are deleted anyway and aos says how to revoke the token later
(with aos token revoke ID on the server host).`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, loadErr := e.loadCredentials()
			path, had, err := e.removeCredentials()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !had {
				fmt.Fprintf(out, "not logged in (no %s)\n", path)
				return nil
			}
			if loadErr != nil {
				fmt.Fprintf(out, "removed %s, which could not be read; a token in it was not revoked: find it with aos token ls and revoke it with aos token revoke ID (on the server host)\n", path)
				return nil
			}
			fmt.Fprintf(out, "removed %s (server %s).\n", path, c.Server)
			if err := e.revokeStored(cmd.Context(), c); err != nil {
				how := "aos token revoke " + c.TokenID
				if c.TokenID == "" {
					how = "aos token ls to find it and aos token revoke ID"
				}
				fmt.Fprintf(out, "the token could not be revoked on the server (%v); revoke it with %s (on the server host)\n", err, how)
				return nil
			}
			fmt.Fprintln(out, "the token is revoked on the server.")
			return nil
		},
	}
}

// readLine reads bytes up to a newline, one at a time, so that nothing
// after the line is consumed (the password and the TOTP code come from
// the same stdin).
func readLine(r io.Reader) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < maxTokenLen {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				break
			}
			return "", err
		}
	}
	return strings.TrimRight(string(line), "\r"), nil
}

// revokeStored asks the server to revoke the stored token. A token the
// server no longer accepts (401) counts as revoked.
func (e *clientEnv) revokeStored(ctx context.Context, c credentials) error {
	if c.Server == "" || c.Token == "" {
		return errors.New("no token was stored")
	}
	cl, err := client.New(c.Server, c.Token, client.Options{Transport: e.transport})
	if err != nil {
		return classify(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = cl.RevokeCurrentToken(ctx)
	if ce, ok := client.AsError(err); ok && ce.Status == http.StatusUnauthorized {
		return nil
	}
	return classify(err)
}
