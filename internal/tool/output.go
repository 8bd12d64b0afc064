package tool

import (
	"context"
	"fmt"
	"unicode/utf8"
)

// Output shaping limits, in characters (runes).
const (
	ArtifactThreshold = 12000
	HeadChars         = 6000
	TailChars         = 3000
)

// Shaped is a tool output as the model sees it.
type Shaped struct {
	Content string
	// Artifact is set when the full output was stored.
	Artifact *ArtifactRef
}

// ArtifactRef names a stored artifact.
type ArtifactRef struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ShapeOutput stores an output over ArtifactThreshold characters as
// artifact name and returns the first HeadChars and last TailChars
// characters with a note between them that names the artifact, its size
// and how to read more with read_artifact. Shorter outputs pass through.
func ShapeOutput(ctx context.Context, a Artifacts, name, output string) (Shaped, error) {
	n := utf8.RuneCountInString(output)
	if n <= ArtifactThreshold {
		return Shaped{Content: output}, nil
	}
	if a == nil {
		return Shaped{}, fmt.Errorf("tool: shape output: no artifact store")
	}
	sha, size, err := a.Put(ctx, name, []byte(output), "text/plain; charset=utf-8")
	if err != nil {
		return Shaped{}, fmt.Errorf("tool: store output artifact %s: %w", name, err)
	}
	head := prefixRunes(output, HeadChars)
	tail := suffixRunes(output, TailChars)
	note := fmt.Sprintf("\n\n[output truncated: %d characters (%d bytes) in total; %d characters omitted here. "+
		"The full output is artifact %q. Read more with read_artifact {\"name\": %q, \"offset\": %d, \"limit\": %d}.]\n\n",
		n, size, n-HeadChars-TailChars, name, name, len(head), ReadArtifactMaxLimit)
	return Shaped{Content: head + note + tail, Artifact: &ArtifactRef{Name: name, SHA256: sha, Size: size}}, nil
}

// prefixRunes returns the first n runes of s.
func prefixRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// suffixRunes returns the last n runes of s.
func suffixRunes(s string, n int) string {
	end := len(s)
	for i := 0; i < n && end > 0; i++ {
		_, size := utf8.DecodeLastRuneInString(s[:end])
		end -= size
	}
	return s[end:]
}
