package cli

import (
	"github.com/aos-run/aos/internal/kernel"
)

// exitCode is a process exit code of aos. It is the one table for every
// command: the local ones (aos run, resume, demo, waits, approve, …) and
// the API client's (aos mission …, project, policy, …) alike. docs/CLI.md
// shows the same table; TestExitCodeTable keeps the two in step.
//
// The one exception is aos sandbox run, which exits with the sandboxed
// command's own code (128+9 when it was killed).
type exitCode int

// The exit codes.
const (
	// exitOK: success; for a command that follows a mission (run, resume,
	// demo, mission watch, create --watch, retry --watch), it ended done.
	exitOK exitCode = 0
	// exitFailure: any other failure: a conflict (409, a wait already
	// resolved), a server error, a local fault such as a database error.
	exitFailure exitCode = 1
	// exitUsage: bad flags or arguments, an ambiguous id prefix, or input
	// refused (400 from the API, invalid input to the mission service).
	exitUsage exitCode = 2
	// exitAuth: not logged in, or the server refused the credential or its
	// scope (401/403).
	exitAuth exitCode = 3
	// exitNotFound: an id or prefix names nothing (404).
	exitNotFound exitCode = 4
	// exitUnreachable: the server could not be reached.
	exitUnreachable exitCode = 5
	// exitPartial: the mission ended partial.
	exitPartial exitCode = 6
	// exitUnfinished: the mission ended blocked, failed or out of budget,
	// or was refused because today's spend reached the daily cap.
	exitUnfinished exitCode = 7
	// exitActionNeeded: a followed preparation (aos agent prepare --wait,
	// aos operation get --wait) ended failed or needs the user's action,
	// or a sent turn was not delivered (its receipt failed).
	exitActionNeeded exitCode = 8
	// exitCancelled: the mission was cancelled, or the command was
	// interrupted (Ctrl-C) and left it running or resumable.
	exitCancelled exitCode = 130
)

// statusExit is the exit code of a command that followed a mission to its
// end, by the mission's final status.
func statusExit(status string) exitCode {
	switch status {
	case kernel.StatusDone:
		return exitOK
	case kernel.StatusPartial:
		return exitPartial
	case kernel.StatusCancelled:
		return exitCancelled
	}
	return exitUnfinished
}
