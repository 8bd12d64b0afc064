package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
)

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// decodeBody decodes r's JSON body into v strictly: unknown fields,
// trailing data, a wrong type or a body over MaxBody is a typed 400. An
// empty body is accepted only when emptyOK (routes without parameters).
func decodeBody(w http.ResponseWriter, r *http.Request, v any, emptyOK bool) error {
	body := http.MaxBytesReader(w, r.Body, MaxBody)
	data, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{status: http.StatusBadRequest, code: codeBodyTooLarge, msg: "request body is larger than 1 MiB"}
		}
		return &apiError{status: http.StatusBadRequest, code: codeInvalidJSON, msg: "could not read the request body"}
	}
	return decodeJSON(data, v, emptyOK)
}

// decodeJSON is decodeBody's pure part, fuzzed on its own.
func decodeJSON(data []byte, v any, emptyOK bool) error {
	if len(data) == 0 && emptyOK {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &apiError{status: http.StatusBadRequest, code: codeInvalidJSON, msg: jsonMessage(err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &apiError{status: http.StatusBadRequest, code: codeInvalidJSON, msg: "trailing data after the JSON value"}
	}
	return nil
}

// jsonMessage describes a decoding error without echoing input values.
func jsonMessage(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "malformed JSON at offset " + strconv.FormatInt(se.Offset, 10)
	case errors.As(err, &te):
		return "field " + strconv.Quote(te.Field) + " must be " + te.Type.String()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "a JSON object is required"
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg // json: unknown field "x"
}

// queryInt parses an optional integer query parameter.
func queryInt(r *http.Request, name string) (*int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, msg: name + " must be an integer"}
	}
	return &v, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
