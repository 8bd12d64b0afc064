package agent

import "errors"

// Error codes of seed 000's error table, and the carried Store/creator codes
// this service uses. Their meaning is the seed's.
const (
	CodeUnsupportedCapability  = "UNSUPPORTED_CAPABILITY"
	CodeProtoUnsupported       = "PROTO_UNSUPPORTED"
	CodeHelloRequired          = "HELLO_REQUIRED"
	CodeRateLimited            = "RATE_LIMITED"
	CodeBackpressure           = "BACKPRESSURE"
	CodeInvalidRequest         = "INVALID_REQUEST"
	CodeMachineMismatch        = "MACHINE_MISMATCH"
	CodePackageNotFound        = "PACKAGE_NOT_FOUND"
	CodePackageReviewRequired  = "PACKAGE_REVIEW_REQUIRED"
	CodePackageBroken          = "PACKAGE_BROKEN"
	CodeDependencyNotReady     = "DEPENDENCY_NOT_READY"
	CodeInvalidWorkspace       = "INVALID_WORKSPACE"
	CodeWorkspaceInUse         = "WORKSPACE_IN_USE"
	CodeIdempotencyConflict    = "IDEMPOTENCY_CONFLICT"
	CodeOperationNotFound      = "OPERATION_NOT_FOUND"
	CodeStorageFailed          = "STORAGE_FAILED"
	CodeInstallUnconfirmed     = "INSTALL_UNCONFIRMED"
	CodeCreationUnconfirmed    = "CREATION_UNCONFIRMED"
	CodePreparationUnconfirmed = "PREPARATION_UNCONFIRMED"
	CodeRecoveryRequired       = "RECOVERY_REQUIRED"
	CodeEngineActionRequired   = "ENGINE_ACTION_REQUIRED"
	CodeAgentUnavailable       = "AGENT_UNAVAILABLE"
	CodeRevoked                = "REVOKED"
	CodeInternal               = "INTERNAL"

	// Carried Store/creator codes.
	CodeCloneFailed              = "CLONE_FAILED"
	CodeSetupFailed              = "SETUP_FAILED"
	CodeDoctorFailed             = "DOCTOR_FAILED"
	CodeDSHBusy                  = "DSH_BUSY"
	CodeProjectExists            = "PROJECT_EXISTS"
	CodeProjectPreparationFailed = "PROJECT_PREPARATION_FAILED"
	CodeCWDNotFound              = "CWD_NOT_FOUND"

	// CodeReceiptNotFound: a turn receipt id names nothing for this
	// identity (receipt.get).
	CodeReceiptNotFound = "RECEIPT_NOT_FOUND"
	// CodeAgentNotFound: an agent id names nothing on this machine.
	CodeAgentNotFound = "AGENT_NOT_FOUND"
)

// Error is the service's typed error. Message and Guidance are safe to show
// to the caller: they never hold a secret or a database error's text.
type Error struct {
	Code     string
	Message  string
	Guidance string
	// Err is the underlying cause, for logs; never shown to a device.
	Err error
}

// Error returns "agent: <code>: <message>".
func (e *Error) Error() string {
	s := "agent: " + e.Code
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// ErrorCode returns err's code when it is an *Error, else INTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

func errf(code, msg string) *Error { return &Error{Code: code, Message: msg} }
