//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"

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
	case "run-sleep": // a "worker" that runs a sandboxed sleep until killed
		ws, _ := os.MkdirTemp("", "aos-ws-")
		sb, err := sandbox.New(sandbox.Config{})
		if err != nil {
			fmt.Println(err)
			return 1
		}
		out, err := sb.Run(context.Background(), sandbox.Spec{Command: "sleep " + args[1], Workspace: ws})
		fmt.Println(out, err)
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
