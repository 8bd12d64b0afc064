package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// credentials are what aos login stores: the server and a bearer token.
type credentials struct {
	Server string `json:"server"`
	Token  string `json:"token"`
	// TokenID names the token on the server (interactive login only), so
	// that it can be revoked.
	TokenID string `json:"tokenId,omitempty"`
}

// credentialsPath is <config dir>/aos/credentials.json.
func (e *clientEnv) credentialsPath() (string, error) {
	dir, err := e.configDir()
	if err != nil {
		return "", fmt.Errorf("find the user config directory: %w", err)
	}
	return filepath.Join(dir, "aos", "credentials.json"), nil
}

// loadCredentials reads the stored credentials (zero when none).
func (e *clientEnv) loadCredentials() (credentials, error) {
	var c credentials
	path, err := e.credentialsPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read credentials: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return credentials{}, &exitError{code: exitAuth, msg: "credentials file " + path + " is corrupt; run aos logout and aos login again"}
	}
	return c, nil
}

// saveCredentials writes c atomically (a temp file renamed over the old
// one) with mode 0600 in a 0700 directory.
func (e *clientEnv) saveCredentials(c credentials) (string, error) {
	path, err := e.credentialsPath()
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save credentials: %w", err)
	}
	// MkdirAll keeps an existing directory's mode: tighten it.
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("save credentials: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".credentials-*.json") // created 0600
	if err != nil {
		return "", fmt.Errorf("save credentials: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return "", fmt.Errorf("save credentials: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return "", fmt.Errorf("save credentials: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", fmt.Errorf("save credentials: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("save credentials: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("save credentials: %w", err)
	}
	return path, nil
}

// removeCredentials deletes the stored credentials; it reports whether
// there were any.
func (e *clientEnv) removeCredentials() (string, bool, error) {
	path, err := e.credentialsPath()
	if err != nil {
		return "", false, err
	}
	err = os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return path, false, fmt.Errorf("remove credentials: %w", err)
	}
	return path, true, nil
}
