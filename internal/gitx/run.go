package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/tmpdirs"
)

// DefaultTimeout bounds one git run unless Cmd.Timeout says otherwise.
const DefaultTimeout = 2 * time.Minute

// Hardening is the command-line config every git run gets. Command-line
// config wins over every config file, so the repository cannot turn these
// back on. Keys that cannot be overridden this way (drivers, helpers,
// includes) are refused by Open instead.
var Hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.attributesFile=/dev/null",
	"-c", "core.pager=cat",
	"-c", "protocol.allow=never",
	"-c", "protocol.https.allow=always",
	"-c", "protocol.ssh.allow=always",
	"-c", "protocol.file.allow=never",
	"-c", "protocol.ext.allow=never",
	"-c", "submodule.recurse=false",
	"-c", "fetch.recurseSubmodules=false",
	"-c", "push.recurseSubmodules=no",
	"-c", "diff.ignoreSubmodules=all",
	"-c", "status.submoduleSummary=false",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "push.gpgSign=false",
	"-c", "log.showSignature=false",
	"-c", "credential.helper=",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"--no-pager",
}

// Cmd is one git run.
type Cmd struct {
	// Dir is the directory git runs in; "" is the current directory, for
	// commands that name their directories (clone, init).
	Dir string
	// Args follow the hardening options: the subcommand and its arguments,
	// as an argument vector (never through a shell).
	Args []string
	// Stdin is git's standard input; empty is none.
	Stdin string
	// Env is added to the minimal environment; only the variables Env
	// accepts (identity, a CA file, ceiling directories).
	Env []string
	// Timeout bounds the run; 0 is DefaultTimeout.
	Timeout time.Duration
}

// Result is a finished git run. A non-zero exit is a Result, not an error.
type Result struct {
	Stdout   string
	Combined string // stdout and stderr in the order git wrote them
	Code     int
}

// Run runs git once, hardened: the minimal environment with a fresh empty
// HOME (removed afterwards), the Hardening options, its own process group
// killed whole on cancellation or timeout. The error is for git that could
// not run, timed out or was cancelled.
func Run(ctx context.Context, c Cmd) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("gitx: run: no arguments")
	}
	home, err := os.MkdirTemp("", tmpdirs.GitHome+"*")
	if err != nil {
		return Result{}, fmt.Errorf("gitx: make git's HOME: %w", err)
	}
	defer os.RemoveAll(home)
	env, err := Env(os.Getenv, home, c.Env)
	if err != nil {
		return Result{}, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, Hardening...), c.Args...)...)
	cmd.Dir = c.Dir
	cmd.Env = env
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	var stdout bytes.Buffer
	comb := &lockedBuffer{}
	cmd.Stdout = io.MultiWriter(&stdout, comb)
	cmd.Stderr = comb
	err = cmd.Run()
	res := Result{Stdout: stdout.String(), Combined: comb.String()}
	if ctx.Err() != nil {
		return res, fmt.Errorf("gitx: git %s: %w", c.Args[0], ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("gitx: run git %s: %w", c.Args[0], err)
	}
	return res, nil
}

// lockedBuffer is a buffer two copying goroutines may write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
