package sandbox

import "fmt"

// QuotaError reports that a run's disk use is over its quota
// (Limits.MaxDisk): the model is told to free space.
type QuotaError struct {
	// Used is at least the bytes allocated under the measured roots; the
	// walk stops counting once it is past Limit.
	Used, Limit int64
	// Err is set when the run's dirs could not be measured (for example a
	// directory the command made unreadable): that counts as over quota.
	Err error
}

// Error implements error.
func (e *QuotaError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("sandbox: disk quota: cannot measure the workspace, TMPDIR and HOME (%v); make every directory readable and delete files to continue", e.Err)
	}
	return fmt.Sprintf("sandbox: disk quota exceeded: the workspace, TMPDIR and HOME use more than %s (quota %s); delete files to continue",
		humanBytes(e.Used), humanBytes(e.Limit))
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
