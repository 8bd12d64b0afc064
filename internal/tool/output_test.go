package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/tool"
)

func TestShapeOutputExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := &memArtifacts{}
	// Multi-byte runes make characters and bytes differ.
	body := strings.Repeat("é", 5000) + strings.Repeat("x", 5000) + strings.Repeat("ü", 5000)
	for _, c := range []struct {
		name   string
		in     string
		stored bool
	}{
		{"at threshold", strings.Repeat("é", tool.ArtifactThreshold), false},
		{"one over", strings.Repeat("é", tool.ArtifactThreshold+1), true},
		{"mixed", body, true},
	} {
		s, err := tool.ShapeOutput(ctx, a, "out-"+c.name, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if !c.stored {
			if s.Content != c.in || s.Artifact != nil {
				t.Errorf("%s: changed or stored", c.name)
			}
			continue
		}
		runes := []rune(c.in)
		head, tail := string(runes[:tool.HeadChars]), string(runes[len(runes)-tool.TailChars:])
		if !strings.HasPrefix(s.Content, head) || !strings.HasSuffix(s.Content, tail) {
			t.Errorf("%s: head/tail not exact", c.name)
		}
		note := strings.TrimSuffix(strings.TrimPrefix(s.Content, head), tail)
		if strings.ContainsAny(note, "éü") || !strings.Contains(note, "read_artifact") || !strings.Contains(note, "out-"+c.name) ||
			!strings.Contains(note, fmt.Sprint(len(c.in))) {
			t.Errorf("%s: note %q", c.name, note)
		}
		got, _ := a.Get(ctx, "out-"+c.name)
		if string(got) != c.in || s.Artifact.Size != int64(len(c.in)) {
			t.Errorf("%s: artifact not the full output", c.name)
		}
		if utf8.RuneCountInString(s.Content) > tool.HeadChars+tool.TailChars+400 {
			t.Errorf("%s: shaped content too long", c.name)
		}
	}
}

func TestReadArtifactPaging(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	data := strings.Repeat("é", 10000) // 20000 bytes
	if _, _, err := tc.Artifacts.Put(context.Background(), "big", []byte(data), "text/plain"); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	off := 0
	for i := 0; i < 10; i++ {
		res := run(t, tool.ReadArtifact{}, tc, map[string]any{"name": "big", "offset": off, "limit": 7001})
		if !res.OK {
			t.Fatal(res.Output)
		}
		body, footer, _ := strings.Cut(res.Output, "\n[bytes ")
		if !utf8.ValidString(body) {
			t.Fatalf("page %d not valid UTF-8", i)
		}
		got.WriteString(body)
		if strings.Contains(footer, "end of artifact") {
			break
		}
		if _, err := fmt.Sscanf(footer[strings.Index(footer, "offset ")+7:], "%d", &off); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != data {
		t.Errorf("paged %d bytes, want %d", got.Len(), len(data))
	}
	if res := run(t, tool.ReadArtifact{}, tc, json.RawMessage(`{"name":"nope","offset":null,"limit":null}`)); res.OK {
		t.Error("missing artifact read ok")
	}
}
