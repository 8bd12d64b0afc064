package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
)

// alreadySetUp is what aos setup says when the owner exists.
const alreadySetUp = "already set up: use aos login --server URL"

func (e *clientEnv) newSetupCmd() *cobra.Command {
	var server string
	var tokenStdin bool
	cmd := &cobra.Command{
		Use:   "setup --server URL [--setup-token-stdin]",
		Short: "Create the owner account on a new server (setup token, TOTP, password) and log in",
		Long: `Create the owner account of a server on its first run, from a terminal.

aos asks for the setup token that aos up / aos server printed (no echo;
with --setup-token-stdin it is the first line of stdin), prints the TOTP
secret and its otpauth:// URL to add to an authenticator app, asks for the
new password twice (no echo; the server's policy applies: at least 12
characters) and the app's current code, and creates the account. It then
mints a read+write token named cli@<hostname> with the new session, closes
the session and stores the server and token like aos login, so the client
commands work at once.

When stdin is not a terminal (only with --setup-token-stdin), the password
(twice) and the code are read as the following lines of stdin.

Exit 3 when the setup token is wrong or expired, 1 when the server is
already set up (use aos login) or throttles (it says when to retry).`,
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
			if !e.tty && !tokenStdin {
				return usage("stdin is not a terminal: aos setup asks for secrets without echo (or pass --setup-token-stdin and the lines on stdin)")
			}
			anon, err := client.New(server, "", client.Options{Transport: e.transport})
			if err != nil {
				return classify(err)
			}
			creds, err := e.setup(ctx, cmd, anon, tokenStdin)
			if err != nil {
				return err
			}
			path, err := e.saveCredentials(creds)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "owner account created; logged in to %s (credentials in %s)\n", creds.Server, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server's URL, e.g. http://127.0.0.1:8640 (default: AOS_SERVER or the stored one)")
	cmd.Flags().BoolVar(&tokenStdin, "setup-token-stdin", false, "read the setup token as the first line of stdin instead of asking for it")
	return cmd
}

// setup runs the owner's first-run ceremony and returns the credentials of
// a token minted with the new session.
func (e *clientEnv) setup(ctx context.Context, cmd *cobra.Command, anon *client.Client, tokenStdin bool) (credentials, error) {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var tok string
	var err error
	if tokenStdin {
		tok, err = readLine(e.stdin)
	} else {
		fmt.Fprint(errOut, "setup token: ")
		tok, err = e.readSecret()
		fmt.Fprintln(errOut)
	}
	if err != nil {
		return credentials{}, fmt.Errorf("read the setup token: %w", err)
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return credentials{}, usage("empty setup token: it is printed by aos up or aos server on first run")
	}
	sec, err := anon.SetupBegin(ctx, tok)
	if err != nil {
		return credentials{}, setupError(err)
	}
	fmt.Fprintf(out, "Add this account to your authenticator app (TOTP, SHA-1, 30 s, 6 digits):\n  secret: %s\n  url:    %s\n", sec.TOTPSecret, sec.OTPAuthURL)
	secret := e.readSecret
	if !e.tty {
		secret = func() (string, error) { return readLine(e.stdin) }
	}
	fmt.Fprint(errOut, "new password (at least 12 characters): ")
	pw, err := secret()
	fmt.Fprintln(errOut)
	if err != nil {
		return credentials{}, fmt.Errorf("read the password: %w", err)
	}
	fmt.Fprint(errOut, "new password again: ")
	again, err := secret()
	fmt.Fprintln(errOut)
	if err != nil {
		return credentials{}, fmt.Errorf("read the password: %w", err)
	}
	if pw != again {
		return credentials{}, usage("the passwords differ; nothing was created (run aos setup again)")
	}
	fmt.Fprint(errOut, "TOTP code from the app: ")
	code, err := readLine(e.stdin)
	if err != nil {
		return credentials{}, fmt.Errorf("read the TOTP code: %w", err)
	}
	sess, err := anon.SetupComplete(ctx, tok, pw, strings.TrimSpace(code))
	if err != nil {
		return credentials{}, setupError(err)
	}
	return e.mintToken(ctx, errOut, anon, sess)
}

// setupError explains a refusal of the setup routes.
func setupError(err error) error {
	ce, ok := client.AsError(err)
	if !ok {
		return classify(err)
	}
	switch ce.Status {
	case http.StatusConflict:
		if strings.Contains(ce.Message, "setup is complete") {
			return &exitError{code: exitFailure, msg: alreadySetUp}
		}
	case http.StatusUnauthorized:
		msg := "setup refused: " + oneLine(ce.Message, 200)
		if strings.Contains(ce.Message, "TOTP") {
			msg += "; nothing was created and the setup token stays valid: run aos setup again (it shows a new TOTP secret)"
		} else {
			msg += " (a restart of aos up or aos server prints a new setup token)"
		}
		return &exitError{code: exitAuth, msg: msg}
	case http.StatusTooManyRequests:
		wait := "later"
		if ce.RetryAfter > 0 {
			wait = "in " + ce.RetryAfter.String()
		}
		return &exitError{code: exitFailure, msg: "too many failed attempts from this address: try again " + wait}
	case http.StatusBadRequest:
		return &exitError{code: exitUsage, msg: "refused: " + oneLine(ce.Message, 200) + "; nothing was created"}
	}
	return classify(err)
}
