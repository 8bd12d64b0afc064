package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// sum is the hex sha256 of b.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// stale reports a model-visible message when rel changed since this run
// last read or wrote it. With tracking off (nil FileState) it never does.
func stale(tc *Context, rel string, current []byte, exists bool) string {
	if tc.FileState == nil {
		return ""
	}
	last, seen := tc.FileState[rel]
	switch {
	case !seen && exists:
		return fmt.Sprintf("%s exists but this run has not read it yet: read_file it first, then edit", rel)
	case seen && !exists:
		return fmt.Sprintf("%s was deleted since this run last read it", rel)
	case seen && last != sum(current):
		return fmt.Sprintf("%s changed since this run last read or wrote it: read_file it again before editing", rel)
	}
	return ""
}
