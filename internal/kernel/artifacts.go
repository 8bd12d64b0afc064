package kernel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aos-run/aos/internal/store"
)

// ArtifactMeta describes an artifact being stored.
type ArtifactMeta struct {
	Name    string
	Mime    string
	RunID   string
	StepSeq int
}

// PutArtifact stores r's bytes content-addressed under
// DataDir/artifacts/<sha[0:2]>/<sha>, atomically (temp file, fsync,
// rename, fsync of the directory), and records its metadata. Storing the
// same bytes again is a no-op for the file.
func (k *Kernel) PutArtifact(ctx context.Context, r io.Reader, m ArtifactMeta) (sha string, size int64, err error) {
	if k.opts.DataDir == "" {
		return "", 0, &Error{Code: CodeInvalidInput, Seq: -1, Msg: "kernel has no data dir for artifacts"}
	}
	if m.Name == "" || len(m.Name) > 255 {
		return "", 0, &Error{Code: CodeInvalidInput, Seq: -1, Msg: "artifact name must be 1..255 bytes"}
	}
	root := filepath.Join(k.opts.DataDir, "artifacts")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", 0, fmt.Errorf("put artifact: %w", err)
	}
	tmp, err := os.CreateTemp(root, ".tmp-*")
	if err != nil {
		return "", 0, fmt.Errorf("put artifact: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(tmp, h), r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, fmt.Errorf("put artifact: write: %w", err)
	}
	sha = hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(root, sha[:2])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("put artifact: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, sha)); err != nil {
		return "", 0, fmt.Errorf("put artifact: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	mime := m.Mime
	if mime == "" {
		mime = "application/octet-stream"
	}
	if err := k.retry(ctx, func() error {
		return k.st.InsertArtifact(ctx, store.Artifact{SHA256: sha, Name: m.Name, Mime: mime, Size: size, RunID: m.RunID, StepSeq: m.StepSeq, CreatedAt: k.now()})
	}); err != nil {
		return "", 0, fmt.Errorf("put artifact: %w", err)
	}
	return sha, size, nil
}

// OpenArtifact opens a stored artifact by its SHA-256 (64 hex characters).
// The caller closes the file.
func (k *Kernel) OpenArtifact(ctx context.Context, sha string) (*os.File, store.Artifact, error) {
	if len(sha) != 64 {
		return nil, store.Artifact{}, &Error{Code: CodeInvalidInput, Seq: -1, Msg: "artifact id must be 64 hex characters"}
	}
	if _, err := hex.DecodeString(sha); err != nil {
		return nil, store.Artifact{}, &Error{Code: CodeInvalidInput, Seq: -1, Msg: "artifact id must be 64 hex characters"}
	}
	a, err := k.st.GetArtifact(ctx, sha)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a, &Error{Code: CodeNotFound, Seq: -1, Msg: "no such artifact"}
	}
	if err != nil {
		return nil, a, fmt.Errorf("open artifact: %w", err)
	}
	f, err := os.Open(filepath.Join(k.opts.DataDir, "artifacts", sha[:2], sha))
	if err != nil {
		return nil, a, fmt.Errorf("open artifact: %w", err)
	}
	return f, a, nil
}
