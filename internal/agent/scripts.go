package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxScriptOutput bounds what is kept of a script's combined output.
const maxScriptOutput = 64 << 10

// scriptResult is a finished setup or doctor script.
type scriptResult struct {
	OK    bool
	Lines []string // the last MaxDoctorLines lines, each ≤ MaxDoctorLineLen
	Err   error    // the script could not run or timed out
}

// boundedBuffer keeps the first max bytes written and drops the rest.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

// scriptEnv is a script's whole environment, built from scratch so that
// none of aos's secrets (provider keys, tokens, database URLs) reach it:
// PATH, HOME, USER, LANG and TMPDIR of the owner, and the package's own
// variables.
func scriptEnv(getenv func(string) string, extra ...string) []string {
	env := []string{"LANG=C.UTF-8"}
	for _, k := range []string{"PATH", "HOME", "USER", "LOGNAME", "TMPDIR"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	if getenv("PATH") == "" {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	return append(env, extra...)
}

// runScript runs /bin/sh script in dir as the owner's user — NOT
// sandboxed — in its own process group, killed whole at timeout or when
// ctx ends, with env as its entire environment and its output bounded.
func runScript(ctx context.Context, dir, script string, env []string, timeout time.Duration) scriptResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("/bin/sh", script)
	cmd.Dir = dir
	cmd.Env = env
	out := &boundedBuffer{max: maxScriptOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return scriptResult{Err: fmt.Errorf("start %s: %w", script, err)}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		res := scriptResult{Lines: lastLines(out.buf.String())}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.Err = fmt.Errorf("%s timed out after %s", script, timeout)
		} else {
			res.Err = fmt.Errorf("%s stopped: %w", script, ctx.Err())
		}
		return res
	}
	// A background child left in the group would hold no pipe open past
	// Wait's return only if it closed them; kill the group either way.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	res := scriptResult{OK: err == nil, Lines: lastLines(out.buf.String())}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		res.Err = fmt.Errorf("run %s: %w", script, err)
	}
	return res
}

// lastLines returns the last MaxDoctorLines non-empty lines of s, each cut
// to MaxDoctorLineLen characters, with control characters replaced.
func lastLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		l = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				return '?'
			}
			return r
		}, strings.ToValidUTF8(l, "?"))
		if r := []rune(l); len(r) > MaxDoctorLineLen {
			l = string(r[:MaxDoctorLineLen])
		}
		lines = append(lines, l)
	}
	if len(lines) > MaxDoctorLines {
		lines = lines[len(lines)-MaxDoctorLines:]
	}
	return lines
}
