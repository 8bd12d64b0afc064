// Package demo holds aos's demonstration mission: a tiny repository with a
// failing test, and the scripted model that fixes it. `aos demo` runs it
// through the real kernel, SDK, sandbox and git; the engine's end-to-end
// tests run it too.
package demo

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aos-run/aos/internal/gitx"
)

//go:embed fix-failing-test.yaml
var script []byte

// Model is the scripted model's name; "script:" marks it as scripted
// everywhere it appears.
const Model = "script:fix-failing-test"

// Objective and Criterion are the demo mission's.
const (
	Objective = "The test suite fails: `sh test.sh` reports that add 2 3 is not 5. Find the bug in calc.sh, fix it, and commit the fix."
	Criterion = "`sh test.sh` exits 0"
)

// Script returns the scripted model's YAML.
func Script() []byte { return append([]byte(nil), script...) }

var files = map[string]string{
	"calc.sh":   "# calc.sh: small arithmetic helpers.\nadd() {\n  echo \"$(( $1 - $2 ))\"\n}\n",
	"test.sh":   "#!/bin/sh\n. ./calc.sh\ngot=$(add 2 3)\nif [ \"$got\" = 5 ]; then\n  echo PASS\nelse\n  echo \"FAIL: add 2 3 = $got, want 5\"\n  exit 1\nfi\n",
	"README.md": "# calc\n\nRun the tests with `sh test.sh`.\n",
}

// WriteRepo creates the demo repository in dir (which must be empty or
// absent): the files above, committed on branch main.
func WriteRepo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	ident := []string{"GIT_AUTHOR_NAME=aos demo", "GIT_AUTHOR_EMAIL=demo@aos.invalid",
		"GIT_COMMITTER_NAME=aos demo", "GIT_COMMITTER_EMAIL=demo@aos.invalid"}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		{"commit", "-q", "-m", "calc: add() and its test"},
	} {
		r, err := gitx.Run(context.Background(), gitx.Cmd{Dir: dir, Args: args, Env: ident})
		if err == nil && r.Code != 0 {
			err = fmt.Errorf("exit status %d", r.Code)
		}
		if err != nil {
			return fmt.Errorf("demo: git %v: %v: %s", args, err, r.Combined)
		}
	}
	return nil
}
