// Package testbin builds a Go program once per test process, for tests
// that run aos (or a helper program of theirs) as a real process, and
// writes the executables such tests run (WriteExecutable).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Program is one Go package to build once, into a temp dir of its own
// that Remove deletes.
type Program struct {
	pkg, name, prefix string

	once sync.Once
	path string
	err  error
}

// New returns the program built from pkg (an import path, or a directory
// relative to the test's package) as name, in a temp dir named prefix*.
func New(pkg, name, prefix string) *Program {
	return &Program{pkg: pkg, name: name, prefix: prefix}
}

// Path builds the program the first time it is called and returns its
// path; it fails t when the build failed.
func (p *Program) Path(t testing.TB) string {
	t.Helper()
	p.once.Do(func() {
		dir, err := os.MkdirTemp("", p.prefix)
		if err != nil {
			p.err = fmt.Errorf("build %s: %w", p.name, err)
			return
		}
		p.path = filepath.Join(dir, p.name)
		build := exec.Command("go", "build", "-o", p.path, p.pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as scripts/run.sh builds aos
		if out, err := build.CombinedOutput(); err != nil {
			p.err = fmt.Errorf("build %s: go build: %v\n%s", p.name, err, out)
		}
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	return p.path
}

// Remove deletes the built program and its dir, if it was built; call it
// from TestMain once the tests have run.
func (p *Program) Remove() {
	if p.path != "" {
		_ = os.RemoveAll(filepath.Dir(p.path))
	}
}
