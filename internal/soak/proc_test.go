//go:build linux

package soak

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one aos process of a mission (aos run or aos resume): its
// stdout lines as they come, and its end.
type proc struct {
	cmd   *exec.Cmd
	lines chan string   // stdout lines; closed at EOF or when the read end is closed
	done  chan struct{} // closed once the process has been waited for
	r     *os.File

	mu     sync.Mutex // guards out, state
	out    strings.Builder
	errBuf bytes.Buffer
	state  *os.ProcessState
}

// startProc starts bin with args and env in its own process group, so that
// cleanup can kill whatever it leaves behind. The caller kills only the aos
// process itself (by PID), as a crash would.
func startProc(t *testing.T, bin string, env []string, args ...string) (*proc, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	p := &proc{lines: make(chan string, 4096), done: make(chan struct{}), r: r}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdin = nil
	p.cmd.Stdout = w
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, b: &p.errBuf}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start aos %s: %w", args[0], err)
	}
	w.Close()
	pgid := p.cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		r.Close()
	})
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out.WriteString(line)
			p.out.WriteByte('\n')
			p.mu.Unlock()
			p.lines <- line
		}
		close(p.lines)
	}()
	go func() {
		_ = p.cmd.Wait()
		p.mu.Lock()
		p.state = p.cmd.ProcessState
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(b)
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL to the aos process only, as a crash would. It returns
// whether the process was still alive to receive it.
func (p *proc) kill() bool {
	select {
	case <-p.done:
		return false
	default:
	}
	return syscall.Kill(p.pid(), syscall.SIGKILL) == nil
}

// wait waits for the process's end (at most d) and returns its state.
func (p *proc) wait(d time.Duration) (*os.ProcessState, error) {
	select {
	case <-p.done:
	case <-time.After(d):
		return nil, fmt.Errorf("aos pid %d did not exit within %s", p.pid(), d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, nil
}

// killedBySIGKILL reports whether the process ended by our SIGKILL.
func (p *proc) killedBySIGKILL() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == nil {
		return false
	}
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func (p *proc) stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errBuf.String()
}

// drain stops reading stdout once the process has ended: lines still in
// flight get a short grace, then the read end is closed (an orphan that
// inherited the pipe must not keep the harness waiting).
func (p *proc) drain() {
	deadline := time.After(500 * time.Millisecond)
	for {
		select {
		case _, ok := <-p.lines:
			if !ok {
				return
			}
		case <-deadline:
			p.r.Close()
			return
		}
	}
}

// orphans lists the live processes whose command line mentions dir,
// except the ones in keep. After a kill -9 of aos, none of its sandboxed
// children (bwrap and what it runs) may survive it (issue 11 finding 6).
func orphans(dir string, keep map[int]bool) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || keep[pid] || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && zombie(st) {
			continue
		}
		out = append(out, fmt.Sprintf("pid %d: %s", pid, oneLine(strings.ReplaceAll(string(b), "\x00", " "), 200)))
	}
	return out
}

// sandboxed lists this mission's slow shell commands ("sleep …; echo …")
// running in the sandbox, each with whether its command has started (a
// "sleep" process descends from it), as opposed to the sandbox still
// setting up. A command is found two ways: on the cold path, as a bwrap
// whose command line names dir and holds the command; in a warm sandbox
// (one bwrap per run, whose init spawns each command), as a process
// holding the command that descends from a bwrap naming dir.
func sandboxed(dir, marker string) map[string]bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	cmds := map[int]string{} // pid → command: a cold bwrap, or a warm sandbox's shell
	boxes := map[int]bool{}  // processes naming dir (this mission's sandboxes)
	warm := map[int]string{} // processes holding a command, not naming dir
	parent := map[int]int{}
	var sleeps []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i >= 0 {
				if f := strings.Fields(string(st[i+1:])); len(f) > 1 {
					parent[pid], _ = strconv.Atoi(f[1])
				}
			}
		}
		command := ""
		for _, a := range args {
			if strings.HasPrefix(a, "sleep ") && strings.Contains(a, marker) {
				command = a
			}
		}
		names := bytes.Contains(b, []byte(dir))
		switch {
		case len(args) > 0 && args[0] == "sleep":
			sleeps = append(sleeps, pid)
		case names && command != "":
			cmds[pid] = command
		case names:
			boxes[pid] = true
		case command != "":
			warm[pid] = command
		}
	}
	for pid, c := range warm {
		for p, n := parent[pid], 0; p > 1 && n < 12; p, n = parent[p], n+1 {
			if boxes[p] {
				cmds[pid] = c
				break
			}
		}
	}
	out := map[string]bool{}
	for _, c := range cmds {
		out[c] = false
	}
	for _, sp := range sleeps {
		for p, n := parent[sp], 0; p > 1 && n < 8; p, n = parent[p], n+1 {
			if c, ok := cmds[p]; ok {
				out[c] = true
				break
			}
		}
	}
	return out
}

// zombie reads the state field of /proc/PID/stat.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// killOrphans SIGKILLs the processes orphans lists.
func killOrphans(dir string) {
	for _, o := range orphans(dir, nil) {
		var pid int
		if _, err := fmt.Sscanf(o, "pid %d:", &pid); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// runQuick runs a short aos command (waits, answer) and returns its stdout.
func runQuick(ctx context.Context, bin string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), fmt.Errorf("aos %s: %w: %s", strings.Join(args, " "), err, oneLine(errb.String(), 300))
		}
		return out.String(), fmt.Errorf("aos %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
