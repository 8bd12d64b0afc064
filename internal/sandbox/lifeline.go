package sandbox

import (
	"fmt"
	"os"
)

// The lifeline: every command starts through lifelineScript, which tells
// aos it runs (a byte on readyFD) and then runs the command only once it
// reads goToken on goFD. aos holds the only write end of the go pipe, so
// when aos dies before it has written the token the wrapper reads EOF and
// exits 125 without running anything. The ready byte comes from inside
// the sandbox after bwrap's child has finished its setup, including the
// parent-death signal of --die-with-parent, so from then on the command
// also dies with bwrap; before then, bwrap's child can outlive a bwrap
// that aos's death killed (bwrap arms the signal only after it forks the
// child), and the lifeline is what keeps it from acting.
//
// The numbers are fixed and below 10 because dash, Debian's /bin/sh,
// takes only single-digit descriptors in redirections: 3 and 4 are
// bwrap's seccomp filter and status pipe, 5 the network-open block pipe
// or the first of Spec.ExtraFiles (at most maxExtraFiles: 5, 6, 7), 8 and
// 9 the lifeline. The wrapper closes 8 and 9 before it execs the command.
const (
	readyFD       = 8
	goFD          = 9
	maxExtraFiles = readyFD - 5
	goToken       = "go"
)

// lifelineScript is run as `/bin/sh -c lifelineScript sh ARGV…` inside
// the sandbox. It spells out readyFD (8), goFD (9) and goToken, and exits
// 125 (like the cgroup launcher) when it does not run the command.
const lifelineScript = `printf r >&8 || exit 125; IFS= read -r t <&9; exec 8>&- 9<&-; [ "$t" = go ] || exit 125; exec "$@"`

// lifelineArgv prefixes argv with the wrapper.
func lifelineArgv(argv []string) []string {
	return append([]string{"/bin/sh", "-c", lifelineScript, "sh"}, argv...)
}

// lifeline is aos's side of the handshake. Its ends are close-on-exec in
// aos (os.Pipe), so no other child of aos inherits them; the child's ends
// are passed as ExtraFiles and closed in aos once bwrap has started.
type lifeline struct {
	readyR, readyW *os.File
	goR, goW       *os.File
	goClosed       bool // guarded by the supervising goroutine, the only user
}

func newLifeline() (*lifeline, error) {
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: lifeline ready pipe: %w", err)
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		_ = readyR.Close()
		_ = readyW.Close()
		return nil, fmt.Errorf("sandbox: lifeline go pipe: %w", err)
	}
	return &lifeline{readyR: readyR, readyW: readyW, goR: goR, goW: goW}, nil
}

// childFiles places the child's ends at readyFD and goFD: extra holds
// ExtraFiles from descriptor 3 on, and is padded with nil (closed in the
// child) up to readyFD.
func (l *lifeline) childFiles(extra []*os.File) []*os.File {
	for len(extra) < readyFD-3 {
		extra = append(extra, nil)
	}
	return append(extra, l.readyW, l.goR)
}

// started closes aos's copies of the child's ends, so that the ready pipe
// reports EOF once every process of the sandbox has gone.
func (l *lifeline) started() {
	_ = l.readyW.Close()
	_ = l.goR.Close()
}

// awaitReady reports on ch whether the wrapper said it runs (false: the
// pipe closed first).
func (l *lifeline) awaitReady(ch chan<- bool) {
	b := make([]byte, 1)
	n, _ := l.readyR.Read(b)
	ch <- n == 1
}

// release lets the command run.
func (l *lifeline) release() {
	if l.goClosed {
		return
	}
	l.goClosed = true
	_, _ = l.goW.Write([]byte(goToken + "\n"))
	_ = l.goW.Close()
}

// cut makes a wrapper that has not been released exit without running
// the command; it does nothing once released.
func (l *lifeline) cut() {
	if l.goClosed {
		return
	}
	l.goClosed = true
	_ = l.goW.Close()
}

// close releases everything aos still holds.
func (l *lifeline) close() {
	l.cut()
	_ = l.readyR.Close()
}
