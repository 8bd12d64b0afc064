package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/wire"
)

// DefaultTimeout bounds one REST request (not the events socket).
const DefaultTimeout = 30 * time.Second

// maxBody bounds a response body the client reads.
const maxBody = 16 << 20

// Client calls one aos server with one token. It is safe for concurrent
// use.
type Client struct {
	base  *url.URL // scheme://host[:port][/path], without the API prefix
	token string
	http  *http.Client
}

// Options configure a Client.
type Options struct {
	// Timeout bounds each REST request (DefaultTimeout when 0).
	Timeout time.Duration
	// Transport is the HTTP transport (http.DefaultTransport when nil).
	Transport http.RoundTripper
}

// New returns a client of the server at base (http or https) that sends
// token as a bearer token ("" sends none).
func New(base, token string, o Options) (*Client, error) {
	u, err := ParseServer(base)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	// Redirects are not followed: a redirect would carry the Authorization
	// header to wherever the server points, and the API never redirects.
	hc := &http.Client{Timeout: o.Timeout, Transport: o.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{base: u, token: token, http: hc}, nil
}

// ParseServer checks a server URL: http or https, a host, no query,
// fragment or credentials. A trailing slash is dropped.
func ParseServer(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(s), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, &Error{Code: CodeBadServer, Message: fmt.Sprintf("server URL %q must be http(s)://host[:port] (no credentials, query or fragment)", redact(s))}
	}
	return u, nil
}

// redact drops the userinfo of a URL-looking string for messages.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return s
}

// Server returns the server's base URL.
func (c *Client) Server() string { return c.base.String() }

// endpoint returns the URL of an API path (under wire.Prefix) with query q.
func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + wire.Prefix + path
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// call sends one JSON request and decodes a 2xx body into out (nil: the
// body is discarded). hdr adds headers (the session routes use it).
func (c *Client) call(ctx context.Context, method, path string, q url.Values, in, out any, hdr http.Header) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("client: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path, q), body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, c.transportError(ctx, method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return resp, decodeError(method, path, resp.StatusCode, data, resp.Header)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp, fmt.Errorf("client: decode %s %s response: %w", method, path, err)
		}
	}
	return resp, nil
}

// transportError wraps a failure to reach the server. *url.Error holds the
// URL, which holds no secret (the token travels in a header). The caller's
// own cancellation or deadline is passed on as such: the server was not
// unreachable, the caller stopped waiting.
func (c *Client) transportError(ctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, ctx.Err())
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &UnreachableError{Server: c.base.String(), Err: fmt.Errorf("%s %s: %w", method, path, unwrapURL(err))}
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
