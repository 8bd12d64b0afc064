package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aos-run/aos/internal/provider"
)

// fullDigest is the digest as a fresh loop computes it: every entry.
func fullDigest(t provider.Transcript) string {
	h := sha256.New()
	for _, e := range t {
		h.Write(e)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestTranscriptDigestRunning: the running digest is, after every change a
// transcript can go through, the digest of the whole transcript (what a
// replaying loop computes from scratch; a difference is a non-determinism
// error on resume).
func TestTranscriptDigestRunning(t *testing.T) {
	t.Parallel()
	entry := func(s string) json.RawMessage { return json.RawMessage(fmt.Sprintf("%q", s)) }
	var d transcriptDigest
	tr := provider.Transcript{entry("first")}
	check := func(what string, tr provider.Transcript) {
		t.Helper()
		if got, want := d.sum(tr), fullDigest(tr); got != want {
			t.Errorf("%s: running digest %s, full digest %s", what, got, want)
		}
	}
	check("one entry", tr)
	check("unchanged", tr)
	for i := range 5 {
		tr = provider.Append(tr, entry(fmt.Sprintf("turn %d", i)))
		check(fmt.Sprintf("appended %d", i), tr)
	}
	check("empty", nil)
	check("rebuilt with equal bytes", provider.Transcript{entry("first"), entry("turn 0")})
	other := provider.Append(tr[:3:3], entry("another branch")) // same prefix, other entry 3
	check("a shorter transcript's sibling", other)
	rebuilt := provider.Append(tr[:2:2], entry("x"), tr[3], tr[4], tr[5])
	check("a middle entry replaced", rebuilt)
	check("back to the first", tr)
}
