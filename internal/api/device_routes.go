package api

import (
	"net/http"

	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/wire"
)

// deviceRoutes are the paired-device routes (docs/DEVICES.md): the owner's
// (pair, list, revoke), the device's code exchange (public, throttled) and
// the device channel, a WebSocket that only a device token opens.
func (s *Server) deviceRoutes() []Route {
	return []Route{
		{Method: "GET", Pattern: "/devices", Scope: mission.ScopeRead, Resp: []wire.Device{}, handle: s.listDevices},
		{Method: "POST", Pattern: "/devices/pairings", Scope: mission.ScopeWrite, Req: wire.PairDeviceRequest{}, Resp: wire.DevicePairing{}, Status: 201, handle: s.pairDevice},
		{Method: "DELETE", Pattern: "/devices/{id}", Scope: mission.ScopeWrite, Status: 204, handle: s.revokeDevice},
		{Method: "POST", Pattern: "/device/pair", Public: true, Req: wire.ExchangePairingRequest{}, Resp: wire.PairedDevice{}, Status: 201, Errors: []int{401, 429}, handle: s.exchangePairing},
		{Method: "GET", Pattern: "/device", Device: true, WebSocket: true, handle: s.deviceSocket},
	}
}

var errNoDevices = &apiError{status: http.StatusServiceUnavailable, code: "unavailable", msg: "the device channel is not configured on this server"}

func (s *Server) devices() (*device.Service, error) {
	if s.opts.Devices == nil {
		return nil, errNoDevices
	}
	return s.opts.Devices, nil
}

func (s *Server) listDevices(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	d, err := s.devices()
	if err != nil {
		return err
	}
	ds, err := d.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]wire.Device, 0, len(ds))
	for _, x := range ds {
		out = append(out, wire.Device(x))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) pairDevice(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	d, err := s.devices()
	if err != nil {
		return err
	}
	var req wire.PairDeviceRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	pr, err := d.Pair(r.Context(), string(p.Actor()), req.Name, s.publicOrigin(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.DevicePairing(pr))
	return nil
}

func (s *Server) revokeDevice(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	d, err := s.devices()
	if err != nil {
		return err
	}
	if err := decodeBody(w, r, &Empty{}, true); err != nil {
		return err
	}
	if err := d.Revoke(r.Context(), string(p.Actor()), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) exchangePairing(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	d, err := s.devices()
	if err != nil {
		return err
	}
	var req wire.ExchangePairingRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	pd, err := d.Exchange(r.Context(), clientIP(r, s.opts.TrustedProxies), req.Code)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.PairedDevice(pd))
	return nil
}

// deviceSocket authenticates the device token (Authorization: Bearer; no
// cookie, no API token) and hands the socket to the device service.
func (s *Server) deviceSocket(w http.ResponseWriter, r *http.Request, _ mission.Principal) error {
	d, err := s.devices()
	if err != nil {
		return err
	}
	tok := bearerHeader(r)
	dev, err := d.Authenticate(r.Context(), tok)
	if err != nil {
		return err
	}
	d.Serve(w, r, dev)
	return nil
}

// publicOrigin is the origin a device should connect to: the configured
// public origin, else the one this request came to.
func (s *Server) publicOrigin(r *http.Request) string {
	if s.opts.Auth != nil {
		if o := s.opts.Auth.PublicOrigin(); o != "" {
			return o
		}
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
