//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
	"golang.org/x/sys/unix"
)

// TestMain lets the test binary act as the probe's inside half, the way the
// aos binary does for `aos sandbox probe-child`, and as an unprivileged
// re-exec of the suite (see asUnprivileged).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg {
		os.Exit(sandbox.InitMain(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == "helper" {
		os.Exit(helper(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// helper runs inside the sandbox as a small, dependable client.
func helper(args []string) int {
	switch args[0] {
	case "connect-unix":
		c, err := net.Dial("unix", args[1])
		if err != nil {
			fmt.Println("connect-unix:", err)
			return 1
		}
		_ = c.Close()
		fmt.Println("connect-unix: connected")
		return 0
	case "open-write": // opens for writing, never writes
		f, err := os.OpenFile(args[1], os.O_WRONLY, 0)
		fmt.Println("open-write:", err)
		if err != nil {
			return 1
		}
		_ = f.Close()
		return 0
	case "run-sleep": // a "worker" that runs a sandboxed sleep until killed: run-sleep MARKER [none|open|probe]
		ws, _ := os.MkdirTemp("", "aos-ws-")
		ws, _ = filepath.EvalSymlinks(ws)
		cfg := sandbox.Config{}
		mode := "none"
		if len(args) > 2 {
			mode = args[2]
		}
		if mode == "probe" { // the canary probe itself never ends
			cfg.ProbeCommand = []string{"/bin/sh", "-c", "exec sleep " + args[1]}
		}
		sb, err := sandbox.New(cfg)
		if err != nil {
			fmt.Println(err)
			return 1
		}
		out, err := sb.Run(context.Background(), sandbox.Spec{Command: "sleep " + args[1], Workspace: ws, Network: sandbox.Network(strings.TrimPrefix(mode, "probe"))})
		fmt.Println(out, err)
		return 0
	case "run-until-go": // a "worker" that dies between the lifeline's ready and go: run-until-go WORKSPACE FILE kill|live [BWRAP]
		ws, file := args[1], args[2]
		cfg := sandbox.Config{}
		if len(args) > 4 {
			cfg.BwrapPath = args[4]
		}
		if args[3] == "kill" {
			cfg = sandbox.WithBeforeGo(cfg, func(argv []string) {
				if !strings.Contains(strings.Join(argv, " "), file) {
					return // the canary probe
				}
				// Stay alive a moment first: a command that did not wait
				// for "go" would act now, deterministically.
				time.Sleep(300 * time.Millisecond)
				_ = unix.Kill(os.Getpid(), unix.SIGKILL)
			})
		}
		sb, err := sandbox.New(cfg)
		if err != nil {
			fmt.Println(err)
			return 1
		}
		out, err := sb.Run(context.Background(), sandbox.Spec{Command: "echo ran > " + file, Workspace: ws})
		fmt.Println(out, err)
		return 0
	case "spawn": // spawn N SECONDS: start N sleeping children, report how many started
		n, _ := strconv.Atoi(args[1])
		started := 0
		for i := 0; i < n; i++ {
			if exec.Command("sleep", args[2]).Start() == nil {
				started++
			}
		}
		fmt.Printf("started=%d\n", started)
		return 0
	case "alloc": // alloc BYTES: allocate and touch them
		n, _ := strconv.ParseInt(args[1], 10, 64)
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Printf("allocated=%d\n", len(b))
		return 0
	case "setxattr":
		err := unix.Setxattr(args[1], "user.x", []byte("1"), 0)
		fmt.Println("setxattr:", err)
		if err != nil {
			return 1
		}
		return 0
	}
	return 2
}
