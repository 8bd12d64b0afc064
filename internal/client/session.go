package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aos-run/aos/internal/wire"
)

// Session cookie names: __Host-aos_sid over https, aos_sid over plain
// http (a __Host- cookie needs Secure).
var sessionCookies = []string{"__Host-aos_sid", "aos_sid"}

// Session is a logged-in browser-style session: the cookie and its CSRF
// token. It is only used to mint a token for the CLI and is then ended.
type Session struct {
	cookie *http.Cookie
	csrf   string
}

// LoginRequest is POST /auth/login's body.
type LoginRequest struct {
	Password string `json:"password"`
	TOTPCode string `json:"totpCode"`
}

// loginResponse is POST /auth/login's answer.
type loginResponse struct {
	CSRFToken string `json:"csrfToken"`
}

// CreateTokenRequest is POST /tokens's body.
type CreateTokenRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// NewToken is POST /tokens's answer: the secret is shown only once.
type NewToken struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	Token  string   `json:"token"`
}

// Login calls POST /auth/login and returns the session.
func (c *Client) Login(ctx context.Context, password, totp string) (*Session, error) {
	return c.openSession(ctx, "/auth/login", LoginRequest{Password: password, TOTPCode: totp})
}

// SetupBegin calls POST /auth/setup/begin with the setup token.
func (c *Client) SetupBegin(ctx context.Context, setupToken string) (wire.SetupSecret, error) {
	var s wire.SetupSecret
	_, err := c.call(ctx, http.MethodPost, "/auth/setup/begin", nil, wire.SetupBeginRequest{SetupToken: setupToken}, &s, nil)
	if err == nil && (s.TOTPSecret == "" || s.OTPAuthURL == "") {
		err = fmt.Errorf("client: POST /auth/setup/begin answered without a TOTP secret")
	}
	return s, err
}

// SetupComplete calls POST /auth/setup/complete, creating the owner
// account, and returns the session it opens.
func (c *Client) SetupComplete(ctx context.Context, setupToken, password, totp string) (*Session, error) {
	return c.openSession(ctx, "/auth/setup/complete", wire.SetupCompleteRequest{SetupToken: setupToken, Password: password, TOTPCode: totp})
}

// openSession posts body to path and takes the session cookie and CSRF
// token from the answer.
func (c *Client) openSession(ctx context.Context, path string, body any) (*Session, error) {
	var lr loginResponse
	resp, err := c.call(ctx, http.MethodPost, path, nil, body, &lr, nil)
	if err != nil {
		return nil, err
	}
	s := &Session{csrf: lr.CSRFToken}
	for _, ck := range resp.Cookies() {
		for _, name := range sessionCookies {
			if ck.Name == name && ck.Value != "" {
				s.cookie = &http.Cookie{Name: ck.Name, Value: ck.Value}
			}
		}
	}
	if s.cookie == nil || s.csrf == "" {
		return nil, &Error{Status: resp.StatusCode, Code: CodeBadResponse, Message: path + " answered without a session cookie or CSRF token"}
	}
	return s, nil
}

func (s *Session) header() http.Header {
	return http.Header{"Cookie": {s.cookie.String()}, "X-Csrf-Token": {s.csrf}}
}

// CreateToken calls POST /tokens within the session.
func (c *Client) CreateToken(ctx context.Context, s *Session, req CreateTokenRequest) (NewToken, error) {
	var t NewToken
	_, err := c.call(ctx, http.MethodPost, "/tokens", nil, req, &t, s.header())
	if err == nil && t.Token == "" {
		err = fmt.Errorf("client: POST /tokens answered without a token")
	}
	return t, err
}

// Logout calls POST /auth/logout, ending the session.
func (c *Client) Logout(ctx context.Context, s *Session) error {
	_, err := c.call(ctx, http.MethodPost, "/auth/logout", nil, struct{}{}, nil, s.header())
	return err
}

// RevokeCurrentToken calls DELETE /tokens/current: the server revokes the
// token this client sends.
func (c *Client) RevokeCurrentToken(ctx context.Context) error {
	_, err := c.call(ctx, http.MethodDelete, "/tokens/current", nil, nil, nil, nil)
	return err
}

// WithToken returns a copy of c that sends token.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}
