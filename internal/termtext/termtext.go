// Package termtext makes untrusted text safe to print to a terminal.
//
// Model text, tool output, summaries, commands in approval prompts and
// error messages are written by a model aos treats as hostile. A terminal
// interprets control characters and escape sequences: OSC 52 writes the
// clipboard, CSI sequences clear the screen or move the cursor so that an
// approval prompt shows a command other than the one that runs, and
// Unicode bidi and format characters reorder or hide what is shown. Every
// such character is shown here as a visible escape (\x1b, \u009b, \u202e)
// and never reaches the terminal as itself.
//
// termtext imports nothing of aos; every terminal printer of the CLI goes
// through it.
package termtext

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Line returns s for a one-line field: every control character, newlines
// and tabs included, is escaped.
func Line(s string) string { return escape(s, false) }

// Block returns s for a multi-line block: newlines and tabs are kept,
// every other control character is escaped.
func Block(s string) string { return escape(s, true) }

// Controls reports whether s holds anything Block would escape: a control
// character, an escape sequence, a bidi or format character, or invalid
// UTF-8.
func Controls(s string) bool { return Block(s) != s }

// unsafe reports whether r must not reach a terminal as itself.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f: // C0, DEL, C1
		return true
	case r == '\u2028', r == '\u2029': // line and paragraph separators
		return true
	case unicode.Is(unicode.Cf, r): // bidi overrides and isolates, zero-width, tags, BOM
		return true
	}
	return false
}

func escape(s string, block bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafe(r) && !(block && (r == '\n' || r == '\t')) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case block && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x80 && unsafe(r):
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case unsafe(r) || r == utf8.RuneError:
			if r > 0xffff {
				b.WriteString(`\u{` + strconv.FormatInt(int64(r), 16) + "}")
			} else {
				b.WriteString(`\u` + hex4(r))
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// Writer escapes everything written through it as a Block. Each Write is
// escaped on its own, so a printer writes whole strings.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer printing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it; it reports len(p) when the escaped text
// was written whole.
func (w *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, Block(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSON escapes, in encoded JSON, the characters encoding/json leaves raw
// that a terminal may act on: DEL, C1 controls, bidi and format
// characters. They can only occur inside JSON strings, where \uXXXX means
// the same character, so the document is unchanged for a JSON reader.
func JSON(b []byte) []byte {
	s := string(b)
	if !strings.ContainsFunc(s, func(r rune) bool { return r >= 0x7f && unsafe(r) }) {
		return b
	}
	var out strings.Builder
	for _, r := range s {
		if r >= 0x7f && unsafe(r) {
			if r > 0xffff { // a surrogate pair, as JSON spells it
				r1, r2 := utf16.EncodeRune(r)
				out.WriteString(`\u` + hex4(r1) + `\u` + hex4(r2))
				continue
			}
			out.WriteString(`\u` + hex4(r))
			continue
		}
		out.WriteRune(r)
	}
	return []byte(out.String())
}

func hex4(r rune) string {
	h := strconv.FormatInt(int64(r), 16)
	return strings.Repeat("0", 4-len(h)) + h
}
