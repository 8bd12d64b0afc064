package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"

	"github.com/aos-run/aos/internal/provider"
)

// transcriptDigest is the SHA-256 of a transcript's entries, each followed
// by a zero byte: the model_call step's "transcriptSha256". The transcript
// only grows between calls, so the digest is kept running: each call hashes
// the entries added since the last, not the whole conversation again.
// Entries are never changed in place (transcripts share them, see
// provider.Append); a transcript whose first entries are not the very ones
// hashed before (same length, same place in memory) is hashed again from
// the start.
type transcriptDigest struct {
	h      hash.Hash
	hashed []json.RawMessage // the entries written to h, in order
}

// sum returns the digest of t, in hex.
func (d *transcriptDigest) sum(t provider.Transcript) string {
	if d.h == nil || !sameEntries(d.hashed, t) {
		d.h, d.hashed = sha256.New(), d.hashed[:0]
	}
	for _, e := range t[len(d.hashed):] {
		d.h.Write(e)
		d.h.Write([]byte{0})
		d.hashed = append(d.hashed, e)
	}
	return hex.EncodeToString(d.h.Sum(nil))
}

// sameEntries reports whether t begins with the entries of prefix, by
// identity: an entry rebuilt since, even with equal bytes, does not count.
func sameEntries(prefix []json.RawMessage, t provider.Transcript) bool {
	if len(prefix) > len(t) {
		return false
	}
	for i, p := range prefix {
		e := t[i]
		if len(p) != len(e) || (len(p) > 0 && &p[0] != &e[0]) {
			return false
		}
	}
	return true
}
