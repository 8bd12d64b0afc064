package kernel

import "unicode/utf8"

// splitText cuts s into pieces whose JSON string encodings (without the
// quotes) are at most budget bytes each, at rune boundaries, so every
// piece is valid UTF-8 whenever s is. The cost of a rune is an upper bound
// of what encoding/json writes for it: 6 for \uXXXX escapes (control
// characters, U+2028/9, invalid bytes, which become \ufffd), 2 for \" \\
// \n \r \t, else its UTF-8 length. budget must be at least 6.
func splitText(s string, budget int) []string {
	var out []string
	start, used := 0, 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c := runeCost(r, size)
		if used+c > budget && i > start {
			out = append(out, s[start:i])
			start, used = i, 0
		}
		used += c
		i += size
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func runeCost(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1:
		return 6
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '\u2028' || r == '\u2029':
		return 6
	}
	return size
}
