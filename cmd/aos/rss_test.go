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

// BenchmarkIdleRSS measures the idle resident memory of `aos server` and
// `aos worker` on each driver, next to the floor of an idle Go HTTP
// server built with the same toolchain; each sub-benchmark starts the
// process once, lets it settle 5 s and reports MiB-rss (goal < 40 MiB).
//
//	AOS_TEST_POSTGRES_URL=… go test -run '^$' -bench IdleRSS ./cmd/aos
func BenchmarkIdleRSS(b *testing.B) {
	bin := buildAOS(b)
	floorDir := b.TempDir()
	if err := os.WriteFile(filepath.Join(floorDir, "main.go"), []byte(floorProgram), 0o644); err != nil {
		b.Fatal(err)
	}
	floorBin := filepath.Join(floorDir, "floor")
	build := exec.Command("go", "build", "-o", floorBin, "main.go")
	build.Dir = floorDir
	build.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build floor: %v\n%s", err, out)
	}
	measure := func(b *testing.B, cmd *exec.Cmd) {
		b.Helper()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		time.Sleep(5 * time.Second) // let it reach its idle state: this is a measurement
		kb, err := vmRSS(cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(kb)/1024, "MiB-rss")
	}
	b.Run("floor", func(b *testing.B) { measure(b, exec.Command(floorBin)) })
	for _, driver := range storetest.Drivers() {
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(), "AOS_DATA_DIR=" + b.TempDir(),
			"AOS_WORKSPACE_ROOT=" + b.TempDir(), "AOS_ADDR=" + freeAddr(b), "AOS_LOG_LEVEL=warn"}
		if driver == "postgres" {
			db := storetest.New(b, "postgres")
			_ = db.Store.Close()
			env = append(env, "AOS_DATABASE_URL="+db.DSN)
		}
		if r := run(b, bin, env, "migrate"); r.code != 0 {
			b.Fatalf("migrate: %s", r.out)
		}
		for _, role := range []string{"server", "worker"} {
			b.Run(driver+"/"+role, func(b *testing.B) {
				cmd := exec.Command(bin, role)
				cmd.Env = env
				measure(b, cmd)
			})
		}
	}
}
