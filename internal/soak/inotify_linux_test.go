//go:build linux

package soak

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// effect is a workspace change seen by inotify: the kind of effect that
// made it.
type effect string

// The effects the watch tells apart.
const (
	effectLog    effect = "log"    // log.txt grew: a shell append
	effectFile   effect = "file"   // a file was written or renamed into place (write_file, edit_file)
	effectCommit effect = "commit" // the mission branch moved to a new commit
	effectTemp   effect = "temp"   // an aos temp file appeared: a write_file/edit_file in progress
)

// fsWatch reports workspace effects as they happen, so that the harness
// can kill aos between an effect and its journal record. The workspace is
// the mission's git worktree, <worktree root>/<mission id>, made by the
// mission's setup: the watch sees the directory appear in the root, waits
// until git's checkout into it is complete (its files are no effect), and
// then watches it (not recursively). It also watches the owner's
// repository's .git/refs/heads and .git/refs/heads/aos, where the mission
// branch lives.
type fsWatch struct {
	fd      int
	repo    string
	wtRoot  string
	ws      string // the watched worktree, once it is complete
	pending string // a worktree directory seen in wtRoot, not yet complete
	baseRef string // the sha the mission branch starts from (main)
	stop    atomic.Bool
	wds     map[int]string // watch descriptor → directory; read loop only
	events  chan effect
	exited  chan struct{}
}

const wsMask = unix.IN_MODIFY | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_CREATE
const refMask = unix.IN_MOVED_TO | unix.IN_CREATE | unix.IN_CLOSE_WRITE

// newFSWatch starts watching the mission worktree under wtRoot and the
// branches of repo. Close stops it.
func newFSWatch(repo, wtRoot string) (*fsWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify init: %w", err)
	}
	base, err := os.ReadFile(filepath.Join(repo, ".git", "refs", "heads", "main"))
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("read main: %w", err)
	}
	w := &fsWatch{fd: fd, repo: repo, wtRoot: wtRoot, baseRef: strings.TrimSpace(string(base)), wds: map[int]string{},
		events: make(chan effect, 256), exited: make(chan struct{})}
	for _, d := range []struct {
		dir  string
		mask uint32
	}{{wtRoot, unix.IN_CREATE}, {filepath.Join(repo, ".git", "refs", "heads"), unix.IN_CREATE}, {filepath.Join(repo, ".git", "refs", "heads", "aos"), refMask}} {
		if err := w.add(d.dir, d.mask); err != nil && !os.IsNotExist(err) {
			unix.Close(fd)
			return nil, err
		}
	}
	// A resumed process finds the worktree there already.
	if ents, err := os.ReadDir(wtRoot); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				w.pending = filepath.Join(wtRoot, e.Name())
			}
		}
	}
	go w.loop()
	return w, nil
}

func (w *fsWatch) add(dir string, mask uint32) error {
	wd, err := unix.InotifyAddWatch(w.fd, dir, mask)
	if err != nil {
		if err == unix.ENOENT {
			return os.ErrNotExist
		}
		return fmt.Errorf("inotify watch %s: %w", dir, err)
	}
	w.wds[wd] = dir
	return nil
}

// Close stops the watch and releases its descriptor.
func (w *fsWatch) Close() {
	w.stop.Store(true)
	<-w.exited
	unix.Close(w.fd)
}

func (w *fsWatch) loop() {
	defer close(w.exited)
	defer close(w.events)
	buf := make([]byte, 64<<10)
	for !w.stop.Load() {
		w.watchWorktree()
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 20); err != nil || n == 0 {
			continue
		}
		n, err := unix.Read(w.fd, buf)
		if err != nil || n <= 0 {
			continue
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if e, ok := w.classify(w.wds[int(ev.Wd)], name, ev.Mask); ok {
				select {
				case w.events <- e:
				default: // nobody is counting that fast; a trigger needs only the first ones
				}
			}
		}
	}
}

// watchWorktree starts watching the pending worktree once git's checkout
// into it is done: git holds <repo>/.git/worktrees/<name>/locked until
// then, and the worktree's .git file exists.
func (w *fsWatch) watchWorktree() {
	if w.ws != "" || w.pending == "" {
		return
	}
	admin := filepath.Join(w.repo, ".git", "worktrees", filepath.Base(w.pending))
	if _, err := os.Stat(admin); err != nil {
		return
	}
	if _, err := os.Stat(filepath.Join(admin, "locked")); err == nil {
		return
	}
	if fi, err := os.Lstat(filepath.Join(w.pending, ".git")); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if w.add(w.pending, wsMask) == nil {
		w.ws = w.pending
	}
}

// classify names the effect an inotify event shows, if any.
func (w *fsWatch) classify(dir, name string, mask uint32) (effect, bool) {
	heads := filepath.Join(w.repo, ".git", "refs", "heads")
	if dir == "" {
		return "", false // a watch already removed
	}
	switch dir {
	case w.wtRoot:
		if mask&unix.IN_ISDIR != 0 {
			w.pending = filepath.Join(dir, name)
		}
	case w.ws:
		switch {
		case name == "log.txt" && mask&unix.IN_MODIFY != 0:
			return effectLog, true
		case strings.HasPrefix(name, ".aos-") && mask&unix.IN_CREATE != 0:
			return effectTemp, true
		case name == "log.txt", strings.HasPrefix(name, ".aos-"):
			return "", false
		case mask&(unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE) != 0 && mask&unix.IN_ISDIR == 0:
			return effectFile, true
		}
	case heads:
		if name == "aos" && mask&unix.IN_ISDIR != 0 {
			_ = w.add(filepath.Join(heads, "aos"), refMask)
		}
	case filepath.Join(heads, "aos"):
		if strings.HasSuffix(name, ".lock") {
			return "", false
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if sha := strings.TrimSpace(string(b)); err == nil && sha != "" && sha != w.baseRef {
			return effectCommit, true
		}
	}
	return "", false
}
