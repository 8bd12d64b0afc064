package kernel

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSplitText: pieces join to the input, each encodes as a JSON string
// within the budget, and no piece cuts a rune.
func TestSplitText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		s      string
		budget int
	}{
		{"empty", "", 10},
		{"ascii", strings.Repeat("abcdefghij", 50), 64},
		{"multibyte", strings.Repeat("héllo wörld ✓🙂", 40), 64},
		{"escapes", strings.Repeat("\"\\\n\t\x01\u2028<&>", 40), 64},
		{"invalid utf-8", strings.Repeat("a\xff\xfeb\xc3", 40), 64},
		{"tight budget", strings.Repeat("🙂", 10), 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := splitText(tc.s, tc.budget)
			if strings.Join(parts, "") != tc.s {
				t.Fatalf("pieces do not join to the input")
			}
			for _, p := range parts {
				enc, err := marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				if len(enc)-2 > tc.budget {
					t.Errorf("piece %q encodes to %d bytes, budget %d", p, len(enc)-2, tc.budget)
				}
				if utf8.ValidString(tc.s) && !utf8.ValidString(p) {
					t.Errorf("piece %q cuts a rune", p)
				}
				var back string
				if err := json.Unmarshal(enc, &back); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
