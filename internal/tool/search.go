package tool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Search limits.
const (
	SearchMaxResults  = 200
	searchMaxFiles    = 20000
	searchMaxFileSize = 1 << 20
	searchTimeout     = 30 * time.Second
)

type searchInput struct {
	Query string  `json:"query"`
	Mode  string  `json:"mode"`
	Path  *string `json:"path"`
}

func (in searchInput) validate() error {
	switch {
	case in.Query == "":
		return errors.New("query is required")
	case in.Mode != "content" && in.Mode != "name":
		return errors.New(`mode must be "content" or "name"`)
	case strings.ContainsRune(in.Query, 0):
		return errors.New("query contains a NUL byte")
	}
	return nil
}

// Search returns the search tool. With rgPath set it uses ripgrep;
// otherwise a bounded walk. Use exec.LookPath("rg") to find ripgrep.
func Search(rgPath string) Tool {
	return &def[searchInput]{
		name: "search",
		description: "Search the workspace. mode \"content\": lines matching a regular expression (path:line:text). " +
			"mode \"name\": file paths containing the query (case-insensitive). At most 200 results.",
		schema: mustJSON(object(
			str("query", "Regular expression (content) or name fragment (name)."),
			enum("mode", "What to match.", "content", "name"),
			optStr("path", "Directory to search, relative to the workspace; null for all of it."),
		)),
		effect:       always[searchInput](EffectRead),
		risk:         riskAlways[searchInput](RiskRead),
		parallelSafe: true,
		run: func(ctx context.Context, tc *Context, in searchInput) (Result, error) {
			return runSearch(ctx, tc, in, rgPath)
		},
		approval: func(in searchInput) Approval { return Approval{Title: "Search for " + in.Query} },
	}
}

func runSearch(ctx context.Context, tc *Context, in searchInput, rg string) (Result, error) {
	r, err := ResolvePath(tc.Workspace, deref(in.Path, "."))
	if err != nil {
		return fail("%v", err), nil
	}
	ws, err := filepath.EvalSymlinks(tc.Workspace)
	if err != nil {
		return Result{}, fmt.Errorf("tool: search: resolve workspace: %w", err)
	}
	var hits []string
	truncated := false
	if rg != "" {
		hits, truncated, err = searchRipgrep(ctx, rg, ws, r.Rel, in)
	} else {
		hits, truncated, err = searchWalk(ctx, ws, r.Abs, in)
	}
	if err != nil {
		return fail("search: %v", err), nil
	}
	out := strings.Join(hits, "\n")
	switch {
	case len(hits) == 0:
		out = "no matches"
	case truncated:
		out += fmt.Sprintf("\n[stopped at %d results; narrow the query or path]", SearchMaxResults)
	}
	return Result{OK: true, Output: out, Trust: TrustUntrusted}, nil
}

func searchRipgrep(ctx context.Context, rg, ws, rel string, in searchInput) ([]string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	var args []string
	if in.Mode == "content" {
		args = []string{"--line-number", "--no-heading", "--color=never", "--max-columns=300", "--max-filesize=1M", "-e", in.Query, "--", rel}
	} else {
		args = []string{"--files", "--color=never", "--", rel}
	}
	cmd := exec.CommandContext(ctx, rg, args...)
	cmd.Dir = ws
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false, err
	}
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	var hits []string
	truncated := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	q := strings.ToLower(in.Query)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "./")
		if in.Mode == "name" && !strings.Contains(strings.ToLower(line), q) {
			continue
		}
		if len(hits) == SearchMaxResults {
			truncated = true
			cancel()
			break
		}
		hits = append(hits, line)
	}
	werr := cmd.Wait()
	var ee *exec.ExitError
	if werr != nil && !truncated && !(errors.As(werr, &ee) && ee.ExitCode() == 1) {
		return nil, false, fmt.Errorf("%s", strings.TrimSpace(stderr.String()))
	}
	return hits, truncated, nil
}

// searchWalk is the bounded fallback without ripgrep: it skips .git and
// hidden dirs, files over 1 MiB and binary files, and stops after 20000
// files.
func searchWalk(ctx context.Context, ws, root string, in searchInput) ([]string, bool, error) {
	var re *regexp.Regexp
	if in.Mode == "content" {
		var err error
		if re, err = regexp.Compile(in.Query); err != nil {
			re = regexp.MustCompile(regexp.QuoteMeta(in.Query))
		}
	}
	q := strings.ToLower(in.Query)
	var hits []string
	files := 0
	errStop := errors.New("stop")
	truncated := false
	add := func(s string) bool {
		if len(hits) == SearchMaxResults {
			truncated = true
			return false
		}
		hits = append(hits, s)
		return true
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if files++; files > searchMaxFiles {
			truncated = true
			return errStop
		}
		rel, _ := filepath.Rel(ws, p)
		if in.Mode == "name" {
			if strings.Contains(strings.ToLower(rel), q) && !add(rel) {
				return errStop
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Size() > searchMaxFileSize {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || isBinary(data) {
			return nil
		}
		for i, line := range strings.Split(string(data), "\n") {
			if re.MatchString(line) {
				if len(line) > 300 {
					line = line[:300]
				}
				if !add(fmt.Sprintf("%s:%d:%s", rel, i+1, line)) {
					return errStop
				}
			}
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, false, err
	}
	return hits, truncated, nil
}
