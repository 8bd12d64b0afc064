package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// InputError reports tool input that does not decode or validate.
type InputError struct {
	Tool   string
	Reason string
}

// Error implements error.
func (e *InputError) Error() string {
	return fmt.Sprintf("tool: invalid input for %s: %s", e.Tool, e.Reason)
}

// decode parses input strictly into T: unknown fields and trailing data
// are refused; missing or null input means an empty object.
func decode[T any](tool string, input json.RawMessage) (T, error) {
	var v T
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, &InputError{Tool: tool, Reason: err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, &InputError{Tool: tool, Reason: "trailing data after the JSON object"}
	}
	return v, nil
}

// validator is implemented by input structs.
type validator interface{ validate() error }

// parse decodes and validates input.
func parse[T validator](tool string, input json.RawMessage) (T, error) {
	v, err := decode[T](tool, input)
	if err != nil {
		return v, err
	}
	if err := v.validate(); err != nil {
		return v, &InputError{Tool: tool, Reason: err.Error()}
	}
	return v, nil
}

// fail is a model-visible failure.
func fail(format string, args ...any) Result {
	return Result{OK: false, Output: fmt.Sprintf(format, args...)}
}

// deref returns *p or def.
func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
