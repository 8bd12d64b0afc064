package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/store/storetest"
)

// BenchmarkLoginBurstRSS measures the peak RSS (VmHWM) this process reaches
// during a burst of 300 parallel wrong logins against a password hashed
// with the default argon2 parameters (19 MiB each): "one-ip" from one
// address, "spread" each from its own (through a trusted proxy), so the
// per-IP throttle does not stop them and only the account limit and the
// hash slots bound the memory. It reports MiB-peak (VmHWM, reset before the
// burst) and how many attempts reached the password check (checked).
// Needs the sqlite3 command.
//
//	go test -run '^$' -bench LoginBurstRSS -benchtime 1x ./internal/api
func BenchmarkLoginBurstRSS(b *testing.B) {
	const n = 300
	for _, spread := range []bool{false, true} {
		b.Run(map[bool]string{false: "one-ip", true: "spread"}[spread], func(t *testing.B) {
			if _, err := exec.LookPath("sqlite3"); err != nil {
				t.Skip("needs the sqlite3 command")
			}
			db := storetest.New(t, "sqlite")
			bd := setup(t, db, setupOpts{api: api.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
			bd.setUpOwner()
			hash, err := auth.HashPassword(ownerPassword, auth.DefaultArgon2)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("sqlite3", db.DSN, "UPDATE owner_account SET password_hash = '"+hash+"'").CombinedOutput(); err != nil {
				t.Fatalf("sqlite3: %v %s", err, out)
			}
			runtime.GC()
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				t.Skipf("cannot reset the peak RSS: %v", err)
			}
			body, _ := json.Marshal(map[string]string{"password": "not the password", "totpCode": "000000"})
			var wg sync.WaitGroup
			var mu sync.Mutex
			codes := map[int]int{}
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest("POST", bd.srv.URL+api.Prefix+"/auth/login", bytes.NewReader(body))
					if spread {
						req.Header.Set("X-Forwarded-For", netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String())
					}
					resp, err := bd.srv.Client().Do(req)
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
			t.ReportMetric(float64(vmHWM(t))/1024, "MiB-peak")
			t.ReportMetric(float64(codes[http.StatusUnauthorized]), "checked")
		})
	}
}

// vmHWM is the process's peak resident set size in KiB.
func vmHWM(t testing.TB) int {
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
