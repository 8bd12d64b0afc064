package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/aos-run/aos/internal/wire"
)

// ListDevices calls GET /devices.
func (c *Client) ListDevices(ctx context.Context) ([]wire.Device, error) {
	var ds []wire.Device
	_, err := c.call(ctx, http.MethodGet, "/devices", nil, nil, &ds, nil)
	return ds, err
}

// PairDevice calls POST /devices/pairings: a one-time code for a device to
// be called name.
func (c *Client) PairDevice(ctx context.Context, name string) (wire.DevicePairing, error) {
	var p wire.DevicePairing
	_, err := c.call(ctx, http.MethodPost, "/devices/pairings", nil, wire.PairDeviceRequest{Name: name}, &p, nil)
	return p, err
}

// RevokeDevice calls DELETE /devices/{id}.
func (c *Client) RevokeDevice(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, "/devices/"+url.PathEscape(id), nil, nil, nil, nil)
	return err
}
