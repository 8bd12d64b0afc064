package gitx

import "fmt"

// Code classifies a refusal.
type Code string

// The refusals gitx makes.
const (
	// CodeNotProject: the directory is not the top level of a git work tree
	// whose .git is a real directory.
	CodeNotProject Code = "not_project"
	// CodeUnsafeConfig: the repository's config names a program git would
	// run (a filter, diff or merge driver, a command, a helper, an include).
	CodeUnsafeConfig Code = "unsafe_config"
	// CodeUnsafeRemote: a remote's URL is not https or ssh.
	CodeUnsafeRemote Code = "unsafe_remote"
	// CodeBadEnv: a caller asked for an environment variable gitx sets
	// itself or does not pass.
	CodeBadEnv Code = "bad_env"
)

// Sentinels to match with errors.Is.
var (
	ErrNotProject   = &Error{Code: CodeNotProject}
	ErrUnsafeConfig = &Error{Code: CodeUnsafeConfig}
	ErrUnsafeRemote = &Error{Code: CodeUnsafeRemote}
	ErrBadEnv       = &Error{Code: CodeBadEnv}
)

// Error is a refusal to run git. Msg is meant for the model and the owner:
// it says what was found and what to do, and never repeats a config value.
type Error struct {
	Code Code
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return "gitx: " + string(e.Code)
	}
	return "gitx: " + e.Msg
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func refuse(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}
