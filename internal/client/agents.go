package client

import (
	"context"
	"net/url"
)

// Do calls an API route with a JSON body in (nil for none) and decodes the
// answer into out (nil to discard). It serves routes whose types live
// outside wire (the agent service's, seed 000), so this package stays free
// of them.
func (c *Client) Do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	_, err := c.call(ctx, method, path, q, in, out, nil)
	return err
}
