package cli

import (
	"fmt"
	"io"
	"strings"

	"rsc.io/qr"
)

// writeQR draws text as a QR code with half-block characters, two modules
// per character cell, in explicit black on white (ANSI colours), so that
// it scans on a dark or a light terminal. The quiet zone is 2 modules.
func writeQR(w io.Writer, text string) error {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return fmt.Errorf("draw the QR code: %w", err)
	}
	const quiet = 2
	n := code.Size + 2*quiet
	dark := func(x, y int) bool {
		x, y = x-quiet, y-quiet
		return x >= 0 && y >= 0 && x < code.Size && y < code.Size && code.Black(x, y)
	}
	var b strings.Builder
	for y := 0; y < n; y += 2 {
		for x := 0; x < n; x++ {
			// ▀ shows the upper module in the foreground colour and the
			// lower one in the background colour.
			fg, bg := "97", "107" // bright white
			if dark(x, y) {
				fg = "30" // black
			}
			if y+1 < n && dark(x, y+1) {
				bg = "40" // black
			}
			fmt.Fprintf(&b, "\x1b[%s;%sm▀", fg, bg)
		}
		b.WriteString("\x1b[0m\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}
