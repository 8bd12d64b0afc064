package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// Passkey login challenges are stateless: begin is anonymous, so it stores
// nothing (a stored ceremony per begin let anyone fill the table, or a cap
// on it, and keep the owner's passkey out). A challenge is
//
//	expiry (8 bytes, Unix ms) | nonce (16) | HMAC-SHA-256(key, label | expiry | nonce)[:16]
//
// and finish accepts only one this server signed, before its expiry. Use
// once is enforced after the assertion verifies, by recording the
// challenge (a row only a valid passkey can create).
const (
	challengeNonce = 16
	challengeMAC   = 16
	challengeLen   = 8 + challengeNonce + challengeMAC
	challengeLabel = "aos/webauthn-login\x00"
)

func (s *Service) challengeMAC(expNonce []byte) []byte {
	m := hmac.New(sha256.New, s.opts.Key)
	m.Write([]byte(challengeLabel))
	m.Write(expNonce)
	return m.Sum(nil)[:challengeMAC]
}

// newLoginChallenge returns a signed challenge valid until now+ceremonyTTL.
func (s *Service) newLoginChallenge(now time.Time) ([]byte, error) {
	ch := make([]byte, challengeLen)
	binary.BigEndian.PutUint64(ch, uint64(now.Add(ceremonyTTL).UnixMilli()))
	if _, err := rand.Read(ch[8 : 8+challengeNonce]); err != nil {
		return nil, fault("login challenge", err)
	}
	copy(ch[8+challengeNonce:], s.challengeMAC(ch[:8+challengeNonce]))
	return ch, nil
}

// checkLoginChallenge reports whether ch is a challenge this server signed
// that has not expired at now, and when it expires.
func (s *Service) checkLoginChallenge(ch []byte, now time.Time) (time.Time, bool) {
	if len(ch) != challengeLen {
		return time.Time{}, false
	}
	if !hmac.Equal(ch[8+challengeNonce:], s.challengeMAC(ch[:8+challengeNonce])) {
		return time.Time{}, false
	}
	exp := time.UnixMilli(int64(binary.BigEndian.Uint64(ch)))
	return exp, now.Before(exp)
}
