package sandbox

import "fmt"

// UnavailableError reports that confinement cannot be set up, so no command
// may run. Reason says what went wrong and Fix how a user can repair it.
type UnavailableError struct {
	Reason string
	Fix    string
}

// Error implements error.
func (e *UnavailableError) Error() string {
	if e.Fix == "" {
		return "sandbox: unavailable: " + e.Reason
	}
	return fmt.Sprintf("sandbox: unavailable: %s (fix: %s)", e.Reason, e.Fix)
}

// SetupError reports that bwrap started but failed before running the
// command (its status stream never reported the child's exit code).
type SetupError struct {
	// Message is bwrap's own diagnostic, taken from the combined output.
	Message string
}

// Error implements error.
func (e *SetupError) Error() string {
	return "sandbox: bwrap setup failed: " + e.Message
}

// SpecError reports an invalid Spec, such as a workspace that is not a real
// directory or lies inside a protected path. Nothing was run.
type SpecError struct {
	Field  string
	Reason string
}

// Error implements error.
func (e *SpecError) Error() string {
	return fmt.Sprintf("sandbox: invalid %s: %s", e.Field, e.Reason)
}
