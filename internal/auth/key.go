package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the server key's file under AOS_DATA_DIR when AOS_SECRET_KEY is
// not set.
const KeyFile = "secret.key"

// LoadKey returns the 32-byte server key that encrypts the TOTP secret at
// rest: AOS_SECRET_KEY (64 hex digits) when set, else $dataDir/secret.key,
// created with mode 0600 on first use. Servers sharing a PostgreSQL
// database must share AOS_SECRET_KEY.
func LoadKey(getenv func(string) string, dataDir string) ([]byte, error) {
	if v := strings.TrimSpace(getenv("AOS_SECRET_KEY")); v != "" {
		k, err := hex.DecodeString(v)
		if err != nil || len(k) != 32 {
			return nil, errors.New("auth: AOS_SECRET_KEY must be 64 hex digits (32 bytes)")
		}
		return k, nil
	}
	if dataDir == "" {
		return nil, errors.New("auth: no AOS_SECRET_KEY and no data directory for " + KeyFile)
	}
	path := filepath.Join(dataDir, KeyFile)
	if k, err := readKeyFile(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("auth: create data directory: %w", err)
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fault("make server key", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process made it first
		return readKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: create %s: %w", path, err)
	}
	_, werr := f.WriteString(hex.EncodeToString(k) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("auth: write %s: %w", path, werr)
	}
	return k, nil
}

func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read server key: %w", err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) != 32 {
		// A half-written file from a concurrent creator reads short; the
		// caller retries by starting again.
		return nil, fmt.Errorf("auth: %s must hold 64 hex digits", path)
	}
	return k, nil
}

// sealer encrypts small secrets with AES-256-GCM.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (sealer, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return sealer{}, fmt.Errorf("auth: server key: %w", err)
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		return sealer{}, fmt.Errorf("auth: server key: %w", err)
	}
	return sealer{aead: a}, nil
}

// seal returns base64(nonce | ciphertext), bound to purpose.
func (s sealer) seal(plain []byte, purpose string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fault("seal", err)
	}
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(purpose))), nil
}

// open reverses seal; a wrong key or purpose fails.
func (s sealer) open(enc, purpose string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(b) < s.aead.NonceSize() {
		return nil, errors.New("auth: sealed secret is malformed")
	}
	n := s.aead.NonceSize()
	p, err := s.aead.Open(nil, b[:n], b[n:], []byte(purpose))
	if err != nil {
		return nil, errors.New("auth: cannot decrypt a stored secret: is AOS_SECRET_KEY (or secret.key) the one it was written with?")
	}
	return p, nil
}
