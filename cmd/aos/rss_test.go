package main_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store/storetest"
)

// floorProgram is the physical floor for an idle Go network service: a
// net/http server that serves nothing.
const floorProgram = `package main

import (
	"net"
	"net/http"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	_ = http.Serve(ln, http.NotFoundHandler())
}
`

// vmRSS reads a process's resident set size in KiB from /proc.
func vmRSS(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb int
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

// TestIdleRSSFigures measures the idle resident memory of `aos server` and
// `aos worker` on each driver, next to the floor of an idle Go HTTP
// server built with the same toolchain. A measurement, not a timed test:
// it runs only with AOS_BENCH=1 and logs its figures (goal: < 40 MiB each).
//
//	AOS_BENCH=1 go test ./cmd/aos -run TestIdleRSSFigures -v
func TestIdleRSSFigures(t *testing.T) {
	if os.Getenv("AOS_BENCH") == "" {
		t.Skip("a measurement; set AOS_BENCH=1")
	}
	bin := buildAOS(t)
	floorDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(floorDir, "main.go"), []byte(floorProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	floorBin := filepath.Join(floorDir, "floor")
	build := exec.Command("go", "build", "-o", floorBin, "main.go")
	build.Dir = floorDir
	build.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build floor: %v\n%s", err, out)
	}
	settle := 5 * time.Second
	measure := func(t *testing.T, name string, cmd *exec.Cmd) int {
		t.Helper()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		time.Sleep(settle) // let it reach its idle state; this is a measurement, not an assertion
		kb, err := vmRSS(cmd.Process.Pid)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return kb
	}
	floor := measure(t, "floor", exec.Command(floorBin))
	t.Logf("floor (idle Go net/http server): %.1f MiB", float64(floor)/1024)
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir(),
				"AOS_WORKSPACE_ROOT=" + t.TempDir(), "AOS_ADDR=" + freeAddr(t), "AOS_LOG_LEVEL=warn"}
			if driver == "postgres" {
				db := storetest.New(t, "postgres")
				_ = db.Store.Close()
				env = append(env, "AOS_DATABASE_URL="+db.DSN)
			}
			if r := run(t, bin, env, "migrate"); r.code != 0 {
				t.Fatalf("migrate: %s", r.out)
			}
			for _, role := range []string{"server", "worker"} {
				cmd := exec.Command(bin, role)
				cmd.Env = env
				kb := measure(t, role, cmd)
				t.Logf("%s aos %s idle RSS: %.1f MiB (%.2f× the floor)", driver, role, float64(kb)/1024, float64(kb)/float64(floor))
			}
		})
	}
}
