package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestRSSHarness measures the process's peak RSS (VmHWM) across a burst
// of parallel wrong logins against a password hashed with the default
// argon2 parameters (19 MiB). It is a measurement, not a check: it runs
// only with AOS_RSS_HARNESS=<n> (the burst size) and logs the figures;
// AOS_RSS_SPREAD=1 sends each request from its own IP (through a trusted
// proxy), so the per-IP throttle does not stop them and only the hash
// slots bound the memory.
func TestRSSHarness(t *testing.T) {
	n := 0
	if _, err := fmt.Sscan(os.Getenv("AOS_RSS_HARNESS"), &n); err != nil || n <= 0 {
		t.Skip("a measurement: set AOS_RSS_HARNESS=<burst size>")
	}
	spread := os.Getenv("AOS_RSS_SPREAD") == "1"
	db := storetest.New(t, "sqlite")
	b := setup(t, db, setupOpts{api: api.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	b.setUpOwner()
	hash, err := auth.HashPassword(ownerPassword, auth.DefaultArgon2)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sqlite3", db.DSN, "UPDATE owner_account SET password_hash = '"+hash+"'").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v %s", err, out)
	}
	before := vmHWM(t)
	body, _ := json.Marshal(map[string]string{"password": "not the password", "totpCode": "000000"})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", b.srv.URL+api.Prefix+"/auth/login", bytes.NewReader(body))
			if spread {
				req.Header.Set("X-Forwarded-For", netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String())
			}
			resp, err := b.srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("burst %d (spread over IPs: %v): statuses %v; peak RSS before %d MiB, after %d MiB", n, spread, codes, before>>10, vmHWM(t)>>10)
}

// vmHWM is the process's peak resident set size in KiB.
func vmHWM(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb
		}
	}
	return 0
}
