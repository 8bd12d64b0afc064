// Package stack starts the real aos binaries a benchmark under bench/
// drives: the scripted model server, aos server and aos worker, on SQLite
// or on a fresh PostgreSQL database.
package stack

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Proc is a child process of the harness (the model server, aos server,
// aos worker); stop sends SIGTERM and waits, then SIGKILL.
type Proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartProc starts bin with env, its stderr in logDir/name.log; it
// returns its stdout.
func StartProc(ctx context.Context, name, bin string, env []string, logDir string, args ...string) (*Proc, *bufio.Reader, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	logf, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{name: name, cmd: cmd, done: make(chan struct{})}
	r := bufio.NewReader(out)
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(p.done) }()
	return p, r, nil
}

// Drain copies the rest of a child's stdout to w in the background.
func Drain(r io.Reader, w io.Writer) { go func() { _, _ = io.Copy(w, r) }() }

// Stop ends the process: SIGTERM, then SIGKILL after 15 s.
func (p *Proc) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// FreeAddr returns a loopback address nobody listens on right now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// WaitHTTP polls url until it answers 200 or the deadline passes.
func WaitHTTP(url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not up after %s: %v", url, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ReadLine reads one line of a child's stdout with a deadline.
func ReadLine(r *bufio.Reader, d time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() { s, err := r.ReadString('\n'); ch <- res{strings.TrimSpace(s), err} }()
	select {
	case x := <-ch:
		return x.s, x.err
	case <-time.After(d):
		return "", fmt.Errorf("no line after %s", d)
	}
}
