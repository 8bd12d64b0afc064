package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
)

// Runner runs a command in the sandbox (a *sandbox.Sandbox).
type Runner interface {
	Run(ctx context.Context, spec sandbox.Spec) (sandbox.Outcome, error)
}

// launch is one engine execution's plan.
type launch struct {
	Argv      []string
	Request   RuntimeRequest
	Workspace string
	Dirs      sandbox.RunPaths
	// Env are KEY=VALUE pairs the engine gets on top of the sandbox's
	// PATH, LANG, TERM, HOME and TMPDIR (the proxy's URL and credential).
	Env     []string
	Network sandbox.Network
	Timeout time.Duration
	// Wrap, when set, replaces the /bin/sh launcher (the proxy's
	// forwarder): it receives the launcher's arguments.
	Wrap []string
	// ExtraFiles are passed to the wrapper (the proxy's control socket).
	ExtraFiles []*os.File
	// Listen lets the wrapper listen in the sandbox's own namespace under
	// network open (sandbox.Spec.Listen): the forwarder's 127.0.0.1 port.
	Listen bool
	// Stdin, when set, replaces the request file as the engine's stdin
	// (an adapter's tool reads its prompt from its arguments: /dev/null).
	Stdin string
	// Parse, when set, reads an adapter's stdout instead of ParseResult,
	// from at most MaxOut bytes.
	Parse  func(out []byte) (status, summary string, err error)
	MaxOut int64
	// OnLine, when set, sees each complete stdout line while the engine
	// runs (live timeline events).
	OnLine func(line []byte)
	// OnErrLine, when set, sees each complete stderr line while the
	// engine runs (a command: engine's event lines).
	OnErrLine func(line []byte)
	// OnOutput, when set, sees the whole stdout (at most MaxOut bytes)
	// once the engine has exited.
	OnOutput func(out []byte)
	// PrivateTmp runs the engine with a private writable /tmp
	// (sandbox.Spec.PrivateTmp), for a tool that hard-codes /tmp.
	PrivateTmp bool
	// MaxData raises the engine's RLIMIT_DATA (sandbox.Spec.MaxData).
	MaxData int64
	// Hide are directories the engine sees empty (sandbox.Spec.Hide);
	// Expose are paths shown read-only inside them.
	Hide, Expose []string
}

// EngineOutcome is how an engine execution ended, as journaled.
type EngineOutcome struct {
	// Status is the runtime result's status, or INTERRUPTED (the owner
	// chose to keep an interrupted run's changes), MALFORMED (the result
	// failed validation), or KILLED (aos stopped it: budget, timeout).
	Status       string          `json:"status"`
	Summary      string          `json:"summary"`
	Verification []Verification  `json:"verification,omitempty"`
	Evidence     json.RawMessage `json:"evidence,omitempty"`
	ExitCode     int             `json:"exitCode"`
	Signal       string          `json:"signal,omitempty"`
	TimedOut     bool            `json:"timedOut,omitempty"`
	Killed       string          `json:"killed,omitempty"`
	Malformed    string          `json:"malformed,omitempty"`
	// StderrTail is the end of the engine's stderr, for the owner.
	StderrTail string `json:"stderrTail,omitempty"`
	Spend      Spend  `json:"spend"`
}

// Engine outcome statuses of aos's own.
const (
	OutcomeInterrupted = "INTERRUPTED"
	OutcomeMalformed   = "MALFORMED"
	OutcomeKilled      = "KILLED"
)

// launcher is the in-sandbox shell that sets the engine's environment and
// its standard streams, then becomes the engine. Its arguments: request
// file, result file, stderr file, KEY=VALUE…, "--", engine argv.
const launcher = `REQ=$1; OUT=$2; ERR=$3; shift 3
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do export "$1"; shift; done
shift
exec "$@" <"$REQ" >"$OUT" 2>"$ERR"`

// runEngine runs the engine once in the sandbox and reads its result.
// A sandbox that cannot run it is an error; an engine that fails,
// misbehaves or prints garbage is an EngineOutcome.
func runEngine(ctx context.Context, sb Runner, l launch) (EngineOutcome, error) {
	io := filepath.Join(l.Dirs.TmpDir, "aos-engine")
	if err := os.RemoveAll(io); err != nil {
		return EngineOutcome{}, fmt.Errorf("backend: clear engine io dir: %w", err)
	}
	if err := os.Mkdir(io, 0o700); err != nil {
		return EngineOutcome{}, fmt.Errorf("backend: make engine io dir: %w", err)
	}
	// The engine can write TMPDIR: it could rename the io dir away and put
	// a link to a host directory in its place. aos reads and writes the
	// io files through the directory it made, held open, never by path.
	dir, err := os.OpenRoot(io)
	if err != nil {
		return EngineOutcome{}, fmt.Errorf("backend: open engine io dir: %w", err)
	}
	defer dir.Close()
	req, err := json.Marshal(l.Request)
	if err != nil {
		return EngineOutcome{}, fmt.Errorf("backend: encode runtime request: %w", err)
	}
	const reqName, outName, errName = "request.json", "result.json", "stderr.log"
	reqPath, outPath, errPath := filepath.Join(io, reqName), filepath.Join(io, outName), filepath.Join(io, errName)
	if err := dir.WriteFile(reqName, req, 0o600); err != nil {
		return EngineOutcome{}, fmt.Errorf("backend: write runtime request: %w", err)
	}
	in := reqPath
	if l.Stdin != "" {
		in = l.Stdin
	}
	args := []string{in, outPath, errPath}
	args = append(args, l.Env...)
	args = append(args, "--")
	args = append(args, l.Argv...)
	argv := append([]string{"/bin/sh", "-c", launcher, "aos-engine"}, args...)
	if len(l.Wrap) > 0 {
		argv = append(append([]string{}, l.Wrap...), args...)
	}
	stopTail := func() {}
	if l.OnLine != nil {
		stopTail = tailLines(dir, outName, l.OnLine)
	}
	stopErrTail := func() {}
	if l.OnErrLine != nil {
		stopErrTail = tailLines(dir, errName, l.OnErrLine)
	}
	// The engine's own program (and a wrapper's) may live where the
	// sandbox hides by default (HOME, the temp dirs): show it, read-only.
	expose := append([]string{}, l.Expose...)
	for _, v := range [][]string{l.Argv, l.Wrap} {
		if len(v) > 0 && filepath.IsAbs(v[0]) {
			expose = append(expose, v[0])
		}
	}
	out, err := sb.Run(ctx, sandbox.Spec{Argv: argv, Workspace: l.Workspace, TmpDir: l.Dirs.TmpDir, Home: l.Dirs.Home,
		Network: l.Network, Timeout: l.Timeout, ReadOnly: []string{".git"}, ExtraFiles: l.ExtraFiles, Listen: l.Listen, Expose: expose,
		Hide: l.Hide, PrivateTmp: l.PrivateTmp, MaxData: l.MaxData})
	stopTail()
	stopErrTail()
	if err != nil {
		return EngineOutcome{}, fmt.Errorf("backend: run engine in the sandbox: %w", err)
	}
	eo := EngineOutcome{ExitCode: out.ExitCode, Signal: out.Signal, TimedOut: out.TimedOut, StderrTail: tailFile(dir, errName, 2000)}
	if launcherOut := strings.TrimSpace(string(out.Output)); launcherOut != "" && eo.StderrTail == "" {
		eo.StderrTail = clip(launcherOut, 2000)
	}
	switch {
	case out.Cancelled:
		eo.Status, eo.Killed = OutcomeKilled, "cancelled"
		return eo, nil
	case out.TimedOut:
		eo.Status, eo.Killed, eo.Summary = OutcomeKilled, "timeout", "the engine ran past its time limit and was killed"
		return eo, nil
	case out.OutputExceeded:
		eo.Status, eo.Killed, eo.Summary = OutcomeKilled, "output", "the engine wrote too much to its terminal and was killed"
		return eo, nil
	}
	if l.Parse != nil {
		raw, err := readCapped(dir, outName, l.MaxOut)
		if err == nil && l.OnOutput != nil {
			l.OnOutput(raw)
		}
		if err == nil {
			if eo.Status, eo.Summary, err = l.Parse(raw); err == nil {
				return eo, nil
			}
		}
		eo.Status, eo.Malformed = OutcomeMalformed, err.Error()
		eo.Summary = fmt.Sprintf("the engine exited %d without a usable result: %s", out.ExitCode, err.Error())
		return eo, nil
	}
	raw, err := readCapped(dir, outName, MaxResultBytes)
	if err == nil {
		var r RuntimeResult
		if r, err = ParseResult(raw); err == nil {
			eo.Status, eo.Summary, eo.Verification, eo.Evidence = r.Status, r.Summary, r.Verification, r.Evidence
			return eo, nil
		}
	}
	eo.Status, eo.Malformed = OutcomeMalformed, err.Error()
	eo.Summary = fmt.Sprintf("the engine exited %d without a valid runtime result: %s", out.ExitCode, err.Error())
	return eo, nil
}

// readCapped reads the regular file name beneath dir that the engine
// wrote, refusing more than max bytes and anything but a regular file (no
// following a symlink it made, no blocking on a FIFO).
func readCapped(dir *os.Root, name string, max int64) ([]byte, error) {
	f, err := dir.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, badResult("no result file: the engine printed nothing on stdout")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, badResult("stdout is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, badResult("cannot read stdout: %s", err.Error())
	}
	if int64(len(b)) > max {
		return nil, badResult("stdout is more than %d bytes", max)
	}
	return b, nil
}

// tailFile returns the last n bytes of the file name beneath dir that the
// engine wrote, sanitized.
func tailFile(dir *os.Root, name string, n int64) string {
	f, err := dir.OpenFile(name, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if fi.Size() > n {
		_, _ = f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return strings.TrimSpace(clipLines(string(b)))
}

// clipLines sanitizes text, keeping newlines.
func clipLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = clip(l, 1000)
	}
	return strings.Join(lines, "\n")
}

// tailLines follows the file name beneath dir that the engine writes and
// hands each complete line to fn, until the returned stop (which reads
// what is left).
func tailLines(dir *os.Root, name string, fn func([]byte)) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var off int64
		var partial []byte
		read := func() {
			f, err := dir.OpenFile(name, os.O_RDONLY|noFollow, 0)
			if err != nil {
				return
			}
			defer f.Close()
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				return
			}
			b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
			off += int64(len(b))
			partial = append(partial, b...)
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				fn(partial[:i])
				partial = partial[i+1:]
			}
			if len(partial) > 1<<20 {
				partial = nil // a line this long is not shown
			}
		}
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				read()
			case <-done:
				read()
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}
