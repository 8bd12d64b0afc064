package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// supervise runs `aos <args>` as a child process until ctx ends,
// restarting it with backoff (1 s doubling to 30 s, reset after a minute of
// uptime) when it exits on its own. On ctx's end it sends SIGTERM and, after
// grace, SIGKILL.
func supervise(ctx context.Context, out io.Writer, name string, args []string, grace time.Duration) {
	// The parent-death signal (childAttr) fires when the OS thread that
	// started the child exits, not the process: keep this goroutine on one
	// thread for as long as it supervises.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(out, "aos up: %s: cannot find the aos binary: %v\n", name, err)
		return
	}
	backoff := time.Second
	for ctx.Err() == nil {
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = childAttr() // Ctrl-C reaches us, not the children directly
		started := time.Now()
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(out, "aos up: %s: %v\n", name, err)
		} else {
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				fmt.Fprintf(out, "aos up: %s exited (%v); restarting in %s\n", name, err, backoff)
			case <-ctx.Done():
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(grace):
					_ = cmd.Process.Kill()
					<-done
				}
				return
			}
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// superviseAll runs each child under supervise until ctx ends.
func superviseAll(ctx context.Context, out io.Writer, children map[string][]string) {
	var wg sync.WaitGroup
	for name, args := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			supervise(ctx, out, name, args, 30*time.Second)
		}()
	}
	wg.Wait()
}
