package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// RunPaths are one run's writable TMPDIR and HOME, kept across the run's
// commands. Remove Root when the run ends.
type RunPaths struct {
	Root, TmpDir, Home string
}

var safeID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) })

// RunDirs creates (or reuses) base/aos-run-<runID>/{tmp,home} with mode
// 0700 and returns their real paths. base "" means os.TempDir(). They
// must not lie inside a protected path such as the aos data dir, or Run
// refuses them.
func RunDirs(base, runID string) (RunPaths, error) {
	if !safeID().MatchString(runID) || runID == "." || runID == ".." {
		return RunPaths{}, &SpecError{Field: "runID", Reason: fmt.Sprintf("%q is not a safe directory name", runID)}
	}
	if base == "" {
		base = os.TempDir()
	}
	real, err := filepath.EvalSymlinks(base)
	if err != nil {
		return RunPaths{}, fmt.Errorf("sandbox: resolve run dir base: %w", err)
	}
	p := RunPaths{Root: filepath.Join(real, "aos-run-"+runID)}
	p.TmpDir, p.Home = filepath.Join(p.Root, "tmp"), filepath.Join(p.Root, "home")
	for _, d := range []string{p.Root, p.TmpDir, p.Home} {
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			return RunPaths{}, fmt.Errorf("sandbox: make run dir: %w", err)
		}
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return RunPaths{}, &SpecError{Field: "runDirs", Reason: d + " is not a real directory"}
		}
	}
	return p, nil
}
