package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"rsc.io/qr"

	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/wire"
)

// TestDeviceCommands: aos device pair prints a single-use code and its
// aos:// URL; the device exchanges it over HTTP; ls lists the device
// (never its token) and revoke ends it, which ls then shows.
func TestDeviceCommands(t *testing.T) {
	t.Parallel()
	r := setupRemote(t, storetest.New(t, "sqlite"))
	out := r.ok("device", "pair", "--name", "phone")
	if !strings.Contains(out, "pairing code for phone: ") || !strings.Contains(out, "URL: aos://pair?code=") {
		t.Fatalf("pair printed %q", out)
	}
	var p wire.DevicePairing
	r.okJSON(&p, "device", "pair", "--name", "robot", "--json")
	body, _ := json.Marshal(wire.ExchangePairingRequest{Code: p.Code})
	resp, err := http.Post(r.srv.URL+"/api/v1/device/pair", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var d wire.PairedDevice
	_ = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || d.DeviceID == "" {
		t.Fatalf("exchange: %d %+v", resp.StatusCode, d)
	}
	ls := r.ok("device", "ls")
	if !strings.Contains(ls, d.DeviceID) || !strings.Contains(ls, "robot") || !strings.Contains(ls, "live, 0 connected") || strings.Contains(ls, d.Token) {
		t.Fatalf("ls printed %q", ls)
	}
	r.ok("device", "revoke", d.DeviceID)
	if ls := r.ok("device", "ls"); !strings.Contains(ls, "revoked") {
		t.Fatalf("ls after revoke printed %q", ls)
	}
	if _, _, code := r.aos("device", "revoke", d.DeviceID); code != exitNotFound {
		t.Errorf("revoke twice: exit %d, want %d", code, exitNotFound)
	}
}

// TestWriteQR reads the drawn QR code back, module by module, from the
// half-block cells and their colours, and compares it with the encoder's
// matrix and a white quiet zone.
func TestWriteQR(t *testing.T) {
	t.Parallel()
	const text = "aos://pair?code=ABCD-EFGH-JKMN&server=https%3A%2F%2Faos.example%3A8640"
	var b bytes.Buffer
	if err := writeQR(&b, text); err != nil {
		t.Fatal(err)
	}
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		t.Fatal(err)
	}
	const quiet = 2
	n := code.Size + 2*quiet
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != (n+1)/2 {
		t.Fatalf("%d lines, want %d", len(lines), (n+1)/2)
	}
	for row, line := range lines {
		cells := strings.Split(strings.TrimSuffix(line, "\x1b[0m"), "▀")
		cells = cells[:len(cells)-1]
		if len(cells) != n {
			t.Fatalf("line %d has %d cells, want %d", row, len(cells), n)
		}
		for x, c := range cells {
			var fg, bg string
			if _, err := fmtSscanf(c, &fg, &bg); err != nil {
				t.Fatalf("cell %d,%d = %q: %v", x, row, c, err)
			}
			for i, y := range []int{2 * row, 2*row + 1} {
				want := false
				if mx, my := x-quiet, y-quiet; mx >= 0 && my >= 0 && mx < code.Size && my < code.Size {
					want = code.Black(mx, my)
				}
				got := []bool{fg == "30", bg == "40"}[i]
				if got != want && y < n {
					t.Fatalf("module %d,%d: dark %v, want %v", x, y, got, want)
				}
			}
		}
	}
}

// fmtSscanf reads a cell's "\x1b[FG;BGm" colours.
func fmtSscanf(cell string, fg, bg *string) (int, error) {
	s, ok := strings.CutPrefix(cell, "\x1b[")
	if !ok || !strings.HasSuffix(s, "m") {
		return 0, errBadCell
	}
	a, c, ok := strings.Cut(strings.TrimSuffix(s, "m"), ";")
	if !ok {
		return 0, errBadCell
	}
	*fg, *bg = a, c
	return 2, nil
}

var errBadCell = errors.New("not a colour cell")
