package mission

import (
	"context"
	"os"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

// Artifact is a stored artifact's metadata as presented.
type Artifact struct {
	SHA256    string `json:"sha256"`
	Name      string `json:"name"`
	Mime      string `json:"mime"`
	Size      int64  `json:"size"`
	RunID     string `json:"runId"`
	StepSeq   int    `json:"stepSeq"`
	CreatedAt int64  `json:"createdAt"`
}

func artifactView(a store.Artifact) Artifact {
	return Artifact{SHA256: a.SHA256, Name: a.Name, Mime: a.Mime, Size: a.Size, RunID: a.RunID, StepSeq: a.StepSeq, CreatedAt: a.CreatedAt}
}

// ListArtifacts returns a run's artifacts.
func (s *Service) ListArtifacts(ctx context.Context, runID string) ([]Artifact, error) {
	if _, err := s.k.GetRun(ctx, runID); err != nil {
		return nil, translate("list artifacts", err)
	}
	as, err := s.st.ListArtifacts(ctx, runID)
	if err != nil {
		return nil, translate("list artifacts", err)
	}
	out := make([]Artifact, 0, len(as))
	for _, a := range as {
		out = append(out, artifactView(a))
	}
	return out, nil
}

// OpenArtifact opens an artifact's bytes by SHA-256 (64 hex characters;
// anything else is invalid input and touches no file). The caller closes
// the file.
func (s *Service) OpenArtifact(ctx context.Context, sha string) (*os.File, Artifact, error) {
	f, a, err := s.k.OpenArtifact(ctx, strings.ToLower(sha))
	if err != nil {
		return nil, Artifact{}, translate("open artifact", err)
	}
	return f, artifactView(a), nil
}

// DownloadName makes a safe attachment file name from name (or the
// artifact's own): letters, digits, dot, dash and underscore only, at most
// 100 characters, never empty or dot-only.
func DownloadName(name, fallback string) string {
	if name == "" {
		name = fallback
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	out := strings.TrimLeft(b.String(), ".")
	if out == "" {
		out = "artifact"
	}
	return out
}
