package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are argon2id's cost parameters.
type Argon2Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

// DefaultArgon2 is OWASP's recommended minimum for argon2id (Password
// Storage Cheat Sheet): 19 MiB of memory, 2 passes, 1 lane; a 16-byte salt
// and a 32-byte hash. One hash costs some 20-40 ms of one core, which the
// login throttle bounds.
var DefaultArgon2 = Argon2Params{MemoryKiB: 19 * 1024, Time: 2, Threads: 1}

// Password policy.
const (
	MinPasswordChars = 12
	MaxPasswordBytes = 1024
)

const (
	saltLen = 16
	keyLen  = 32
)

// HashPassword returns password's argon2id hash as a PHC-style string:
// $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt b64>$<hash b64>
// (standard base64 without padding).
func HashPassword(password string, p Argon2Params) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fault("hash password", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var errBadHash = errors.New("auth: malformed password hash")

// VerifyPassword reports whether password matches the PHC string encoded
// (compared in constant time). Parameters are read from the string, within
// bounds, so that a stored hash cannot make verification run away.
func VerifyPassword(password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var p Argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return false, errBadHash
	}
	if p.MemoryKiB < 8 || p.MemoryKiB > 1<<21 || p.Time < 1 || p.Time > 16 || p.Threads < 1 {
		return false, errBadHash
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(want) < 16 || len(want) > 64 {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// checkPolicy refuses a password shorter than MinPasswordChars characters
// or longer than MaxPasswordBytes bytes.
func checkPolicy(password string) error {
	if len(password) > MaxPasswordBytes {
		return invalid("the password must be at most %d bytes", MaxPasswordBytes)
	}
	if len([]rune(password)) < MinPasswordChars {
		return invalid("the password must be at least %d characters", MinPasswordChars)
	}
	return nil
}
