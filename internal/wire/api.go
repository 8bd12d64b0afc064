package wire

// Prefix is the path prefix of every API route.
const Prefix = "/api/v1"

// Subprotocol is the WebSocket subprotocol of GET /events.
const Subprotocol = "aos.v1"

// MaxReplay is the most events replayed on connect; beyond, a gap notice.
const MaxReplay = 5000

// CloseAuthExpired is the WebSocket close code sent when the token stops
// being valid.
const CloseAuthExpired = 4401

// NoticeCursorExpired is the Notice code the events WebSocket sends when
// retention pruned events after the client's cursor: refetch state and
// resume from LatestID.
const NoticeCursorExpired = "cursor.expired"

// Notice is a system.notice payload.
type Notice struct {
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
	LatestID int64  `json:"latestId,omitempty"`
}

// Empty is the body of routes that take no parameters: empty or {}.
type Empty struct{}

// MessageRequest is POST /runs/{id}/message's body.
type MessageRequest struct {
	Text string `json:"text"`
}

// MessageResponse says which message id the steering message got.
type MessageResponse struct {
	ID int64 `json:"id"`
}

// SetupBeginRequest is POST /auth/setup/begin's body.
type SetupBeginRequest struct {
	SetupToken string `json:"setupToken"`
}

// SetupCompleteRequest is POST /auth/setup/complete's body.
type SetupCompleteRequest struct {
	SetupToken string `json:"setupToken"`
	Password   string `json:"password"`
	TOTPCode   string `json:"totpCode"`
}

// SetupSecret is setup begin's answer: the TOTP secret to enrol (base32)
// and its otpauth:// URI, shown this once.
type SetupSecret struct {
	TOTPSecret string `json:"totpSecret"`
	OTPAuthURL string `json:"otpauthUrl"`
}
