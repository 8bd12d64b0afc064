package wire

// Device is a paired device as the owner API shows it: never its token.
type Device struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	CreatedAt  int64  `json:"createdAt"`
	LastSeenAt int64  `json:"lastSeenAt,omitempty"`
	RevokedAt  int64  `json:"revokedAt,omitempty"`
	// Connected is how many device sockets it has open on this server.
	Connected int `json:"connected"`
}

// PairDeviceRequest is POST /devices/pairings's body.
type PairDeviceRequest struct {
	Name string `json:"name"`
}

// DevicePairing is a one-time pairing code, shown once: Code and URL
// (aos://pair?code=…&server=…) expire at ExpiresAt (Unix ms).
type DevicePairing struct {
	Code      string `json:"code"`
	URL       string `json:"url"`
	Name      string `json:"name"`
	ExpiresAt int64  `json:"expiresAt"`
}

// ExchangePairingRequest is POST /device/pair's body, sent by the device.
type ExchangePairingRequest struct {
	Code string `json:"code"`
}

// PairedDevice is POST /device/pair's answer: Token, the device-role
// token, is shown this once.
type PairedDevice struct {
	DeviceID  string `json:"deviceId"`
	Token     string `json:"token"`
	MachineID string `json:"machineId"`
}
