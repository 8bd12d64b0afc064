package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childrenOf lists the pids whose parent is pid, from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended meanwhile
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')') // comm may hold spaces
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			c, _ := strconv.Atoi(strings.Fields(s)[0])
			out = append(out, c)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// TestUpChildrenDieWithIt: when aos up itself is killed with SIGKILL (no
// chance to stop its children), the kernel's parent-death signal ends the
// server and the worker, so no orphan keeps the port or keeps claiming.
func TestUpChildrenDieWithIt(t *testing.T) {
	bin := buildAOS(t)
	addr := freeAddr(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir(), "AOS_ADDR=" + addr,
		"AOS_WORKSPACE_ROOT=" + t.TempDir(), "AOS_LOG_LEVEL=warn"}
	p := start(t, bin, env, "up")
	var seen strings.Builder
	p.expect(t, regexp.MustCompile(`up on `), &seen)
	waitHealthy(t, "http://"+addr, &seen)
	var kids []int
	for deadline := time.Now().Add(30 * time.Second); len(kids) < 2; kids = childrenOf(t, p.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("aos up has children %v, want the server and the worker", kids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
	})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left []int
		for _, k := range kids {
			if alive(k) {
				left = append(left, k)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("children %v outlived a SIGKILLed aos up", left)
		}
	}
}
