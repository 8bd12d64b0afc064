package hostconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// ErrClosed is returned by a closed Registry.
var ErrClosed = errors.New("hostconfig: registry closed")

// Registry keeps the last valid snapshot of each project it was asked
// about and, once started, watches their files: a change that loads and
// validates is published as a new revision; an invalid change keeps the
// last valid snapshot and is reported by LastError. Safe for concurrent
// use.
type Registry struct {
	userPath string
	log      *slog.Logger
	// OnPublish, when set before Start, is called for each newly
	// published revision (never for an invalid change).
	OnPublish func(root string, s *Snapshot)

	loadMu  sync.Mutex // serializes reloads, so an older load never lands last
	mu      sync.Mutex // guards everything below
	snaps   map[string]*Snapshot
	errs    map[string]error
	w       *fsnotify.Watcher
	watched map[string]bool
	done    chan struct{}
}

// NewRegistry returns a registry over the user-local file at userPath.
func NewRegistry(userPath string, log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{userPath: userPath, log: log, snaps: map[string]*Snapshot{}, errs: map[string]error{}, watched: map[string]bool{}}
}

// UserFile is the user-local file's path.
func (r *Registry) UserFile() string { return r.userPath }

// Start begins watching (fsnotify) until ctx is done or Close is called.
func (r *Registry) Start(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("hostconfig: start watcher: %w", err)
	}
	r.mu.Lock()
	if r.w != nil {
		r.mu.Unlock()
		_ = w.Close()
		return errors.New("hostconfig: registry already started")
	}
	r.w, r.done = w, make(chan struct{})
	r.syncWatchesLocked()
	r.mu.Unlock()
	go r.loop(ctx, w)
	return nil
}

// Close stops the watcher and waits for it.
func (r *Registry) Close() {
	r.mu.Lock()
	w, done := r.w, r.done
	r.mu.Unlock()
	if w != nil {
		_ = w.Close()
		<-done
	}
}

func (r *Registry) loop(ctx context.Context, w *fsnotify.Watcher) {
	defer close(r.done)
	stop := context.AfterFunc(ctx, func() { _ = w.Close() })
	defer stop()
	for {
		select {
		case _, ok := <-w.Events:
			if !ok {
				return
			}
			r.reloadAll()
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			r.log.Warn("config watcher", "err", err.Error())
			r.reloadAll() // an overflow may have lost events
		}
	}
}

// Snapshot returns the latest valid snapshot of the project at root,
// loading it (and watching its files) on first use. With no valid snapshot
// yet, it returns the load error.
func (r *Registry) Snapshot(root string) (*Snapshot, error) {
	root = filepath.Clean(root)
	r.mu.Lock()
	s, ok := r.snaps[root]
	if !ok {
		// Watch first, then load: a change in between is not missed.
		if _, tracked := r.errs[root]; !tracked {
			r.errs[root] = nil
			r.syncWatchesLocked()
		}
	}
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	r.reload(root)
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.snaps[root]; ok {
		return s, nil
	}
	return nil, r.errs[root]
}

// LastError returns the error of the last load of root's files, nil when
// it was valid.
func (r *Registry) LastError(root string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[filepath.Clean(root)]
}

func (r *Registry) reloadAll() {
	r.mu.Lock()
	r.syncWatchesLocked()
	roots := make([]string, 0, len(r.errs))
	for root := range r.errs {
		roots = append(roots, root)
	}
	r.mu.Unlock()
	for _, root := range roots {
		r.reload(root)
	}
}

// reload loads root's files and publishes the snapshot when it is valid
// and its revision changed.
func (r *Registry) reload(root string) {
	r.loadMu.Lock()
	defer r.loadMu.Unlock()
	s, err := Load(root, r.userPath)
	r.mu.Lock()
	r.errs[root] = err
	old := r.snaps[root]
	publish := err == nil && (old == nil || old.Revision != s.Revision)
	if publish {
		r.snaps[root] = s
	}
	cb := r.OnPublish
	r.mu.Unlock()
	if err != nil {
		r.log.Warn("config invalid; keeping the last valid revision", "root", root, "err", err.Error())
		return
	}
	if publish && cb != nil {
		cb(root, s)
	}
}

// syncWatchesLocked watches the directory of each file, or its nearest
// existing ancestor until the directory appears. r.mu is held.
func (r *Registry) syncWatchesLocked() {
	if r.w == nil {
		return
	}
	want := map[string]bool{nearestDir(filepath.Dir(r.userPath)): true}
	for root := range r.errs {
		want[nearestDir(filepath.Join(root, filepath.Dir(RepoPath)))] = true
	}
	for d := range want {
		if !r.watched[d] {
			if err := r.w.Add(d); err != nil {
				r.log.Warn("config watcher: cannot watch", "dir", d, "err", err.Error())
				continue
			}
			r.watched[d] = true
		}
	}
	for d := range r.watched {
		if !want[d] {
			_ = r.w.Remove(d)
			delete(r.watched, d)
		}
	}
}

// nearestDir is dir, or its nearest existing ancestor.
func nearestDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}
