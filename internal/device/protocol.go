package device

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aos-run/aos/internal/agent"
)

// Proto is the one protocol version this channel speaks (seed 000's
// `proto: 1`).
const Proto = 1

// Operation names: seed 000's, exactly.
const (
	OpHello        = "hello"
	OpStoreList    = "store.list"
	OpStoreInspect = "store.inspect"
	OpPrepare      = "agent.prepare"
	OpOperationGet = "operation.get"
	OpTurnSend     = "turn.send"
	OpReceiptGet   = "receipt.get"
)

// Capabilities are what a hello advertises when the agent service is
// wired, in this order.
var Capabilities = []string{OpStoreList, OpStoreInspect, OpPrepare, OpOperationGet, OpTurnSend, OpReceiptGet}

// Header starts every frame: its type and its requestId (a fresh UUIDv4).
// A result's type is the request's with "_result" appended.
type Header struct {
	Type      string `json:"type"`
	RequestID string `json:"requestId"`
}

// HelloRequest opens the application session.
type HelloRequest struct {
	Header
	Proto        *int     `json:"proto"`
	Capabilities []string `json:"capabilities"`
	// Client names the device's software, for the owner; optional.
	Client string `json:"client,omitempty"`
}

// HelloResult answers hello. Capabilities are the server's; the session
// uses those the device listed too.
type HelloResult struct {
	Header
	Proto            int      `json:"proto"`
	MachineID        string   `json:"machineId"`
	DeviceID         string   `json:"deviceId"`
	ServerInstanceID string   `json:"serverInstanceId"`
	Capabilities     []string `json:"capabilities"`
}

// StoreListRequest is store.list.
type StoreListRequest struct {
	Header
	MachineID string  `json:"machineId,omitempty"`
	Query     *string `json:"query,omitempty"`
	Offset    *int    `json:"offset,omitempty"`
	Limit     *int    `json:"limit,omitempty"`
}

// StoreListResult answers store.list.
type StoreListResult struct {
	Header
	agent.StoreListResult
}

// StoreInspectRequest is store.inspect.
type StoreInspectRequest struct {
	Header
	MachineID string `json:"machineId,omitempty"`
	PackageID string `json:"packageId"`
}

// StoreInspectResult answers store.inspect.
type StoreInspectResult struct {
	Header
	agent.StoreInspectResult
}

// PrepareRequest is agent.prepare: no text, no prompt.
type PrepareRequest struct {
	Header
	MachineID      string           `json:"machineId"`
	PackageID      string           `json:"packageId"`
	IdempotencyKey string           `json:"idempotencyKey"`
	Workspace      *agent.Workspace `json:"workspace"`
}

// PrepareResult answers agent.prepare.
type PrepareResult struct {
	Header
	agent.PrepareResult
}

// OperationGetRequest is operation.get.
type OperationGetRequest struct {
	Header
	MachineID   string `json:"machineId,omitempty"`
	OperationID string `json:"operationId"`
}

// OperationGetResult answers operation.get.
type OperationGetResult struct {
	Header
	Operation agent.Operation `json:"operation"`
}

// TurnSendRequest is turn.send: the task, once, under its own key.
type TurnSendRequest struct {
	Header
	MachineID      string `json:"machineId"`
	AgentID        string `json:"agentId"`
	IdempotencyKey string `json:"idempotencyKey"`
	Text           string `json:"text"`
}

// TurnSendResult answers turn.send with the durable delivery receipt.
type TurnSendResult struct {
	Header
	MachineID        string        `json:"machineId"`
	ServerInstanceID string        `json:"serverInstanceId"`
	Receipt          agent.Receipt `json:"receipt"`
}

// ReceiptGetRequest is receipt.get.
type ReceiptGetRequest struct {
	Header
	MachineID string `json:"machineId,omitempty"`
	ReceiptID string `json:"receiptId"`
}

// ReceiptGetResult answers receipt.get.
type ReceiptGetResult struct {
	Header
	Receipt agent.Receipt `json:"receipt"`
}

// ErrorFrame answers a request refused before any reservation:
// {type, requestId, error:{code,message}}. RequestID is null when the
// frame had none that could be echoed.
type ErrorFrame struct {
	Type      string     `json:"type"`
	RequestID *string    `json:"requestId"`
	Error     FrameError `json:"error"`
}

// FrameError is an ErrorFrame's error: a seed 000 code and a message safe
// to show.
type FrameError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// protoError is a refusal with a seed 000 code.
type protoError struct{ code, msg string }

func (e *protoError) Error() string { return "device: " + e.code + ": " + e.msg }

func invalid(format string, a ...any) error {
	return &protoError{agent.CodeInvalidRequest, fmt.Sprintf(format, a...)}
}

// decodeStrict decodes one JSON object into v, refusing unknown fields,
// wrong types and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("the request does not match its schema: %s", schemaError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("trailing data after the request")
	}
	return nil
}

// schemaError names what was wrong without echoing the frame's values.
func schemaError(err error) string {
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ute):
		return fmt.Sprintf("field %q has the wrong type", ute.Field)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	default:
		return "malformed JSON"
	}
}

// isUUIDv4 reports whether s is a canonical UUID of version 4, RFC 4122
// variant.
func isUUIDv4(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s[14] == '4' && strings.ContainsRune("89abAB", rune(s[19]))
}

// validType reports whether s can name an operation (and so be echoed as
// "<type>_result").
func validType(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// required refuses empty required fields, naming the first.
func required(fields ...[2]string) error {
	for _, f := range fields {
		if f[1] == "" {
			return invalid("%s is required", f[0])
		}
	}
	return nil
}
