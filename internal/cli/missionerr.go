package cli

import (
	"errors"

	"github.com/aos-run/aos/internal/mission"
)

// missionError turns an error of the mission service into the exit code
// and message of a local command, as classify does for the API's errors.
// Anything that is not a mission error (a database fault) stays as it is:
// exit 1 with its text, never "not found".
func missionError(err error) error {
	var me *mission.Error
	if !errors.As(err, &me) {
		return err
	}
	msg := me.Msg
	if msg == "" {
		msg = string(me.Code)
	}
	switch me.Code {
	case mission.CodeInvalidInput:
		return &exitError{code: exitUsage, msg: msg}
	case mission.CodeNotFound:
		return &exitError{code: exitNotFound, msg: "not found: " + msg}
	case mission.CodeDailyCap:
		return &exitError{code: exitUnfinished, msg: msg}
	}
	return &exitError{code: exitFailure, msg: string(me.Code) + ": " + msg}
}
