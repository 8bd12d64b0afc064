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
	"path"
	"regexp"
	"strconv"
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
	p := deref(in.Path, ".")
	rel, err := relName(tc.Workspace, p)
	if err != nil {
		return fail("%v", err), nil
	}
	w, err := openWorkspace(tc.Workspace)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = w.Close() }()
	target, err := w.open(rel)
	if err != nil {
		return fail("%v", pathErr(p, err)), nil
	}
	defer func() { _ = target.Close() }()
	fi, err := target.Stat()
	if err != nil {
		return fail("%v", pathErr(p, err)), nil
	}
	var hits []string
	truncated := false
	if rg != "" && fi.IsDir() {
		hits, truncated, err = searchRipgrep(ctx, rg, w, target, rel, in)
	} else {
		hits, truncated, err = searchWalk(ctx, w, rel, in)
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

// searchRipgrep runs ripgrep in the target directory, which it enters
// through the descriptor opened beneath the workspace (/proc/self/fd), not
// by path. ripgrep itself walks by path and could be raced by a concurrent
// rename, so it only proposes hits: each is checked by opening the file
// beneath the workspace again, and a content line is printed from that
// read, never from ripgrep's. Whatever ripgrep saw outside never reaches
// the model.
func searchRipgrep(ctx context.Context, rg string, w *workspace, dir *os.File, rel string, in searchInput) ([]string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	// --no-messages: errors opening or reading files would name what
	// ripgrep met by path (outside, under a race); pattern errors still
	// show.
	args := []string{"--no-config", "--no-messages", "--null", "--color=never"}
	if in.Mode == "content" {
		args = append(args, "--line-number", "--no-heading", "--max-columns=300", "--max-filesize=1M", "-e", in.Query, "--", ".")
	} else {
		args = append(args, "--files", "--", ".")
	}
	cmd := exec.CommandContext(ctx, rg, args...)
	cmd.Dir = "/proc/self/fd/" + strconv.Itoa(int(dir.Fd()))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false, err
	}
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	v := hitVerifier{w: w}
	var hits []string
	truncated := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if in.Mode == "name" {
		sc.Split(splitNUL)
	}
	q := strings.ToLower(in.Query)
	for sc.Scan() {
		var hit string
		if in.Mode == "name" {
			name := path.Join(rel, strings.TrimPrefix(sc.Text(), "./"))
			if !strings.Contains(strings.ToLower(name), q) || !v.exists(name) {
				continue
			}
			hit = name
		} else {
			file, rest, _ := strings.Cut(sc.Text(), "\x00")
			num, _, _ := strings.Cut(rest, ":")
			n, err := strconv.Atoi(num)
			if err != nil {
				continue
			}
			name := path.Join(rel, strings.TrimPrefix(file, "./"))
			line, ok := v.line(name, n)
			if !ok {
				continue
			}
			hit = fmt.Sprintf("%s:%d:%s", name, n, line)
		}
		if len(hits) == SearchMaxResults {
			truncated = true
			cancel()
			break
		}
		hits = append(hits, hit)
	}
	werr := cmd.Wait()
	var ee *exec.ExitError
	if werr != nil && !truncated && !(errors.As(werr, &ee) && ee.ExitCode() == 1) {
		if msg := strings.TrimSpace(stderr.String()); msg != "" || len(hits) == 0 && !errors.As(werr, &ee) {
			return nil, false, fmt.Errorf("%s", firstNonEmpty(msg, werr.Error()))
		}
	}
	return hits, truncated, nil
}

// hitVerifier re-reads ripgrep's hits beneath the workspace.
type hitVerifier struct {
	w     *workspace
	file  string // the file lines came from
	lines []string
}

// exists reports whether name is a file beneath the workspace.
func (v *hitVerifier) exists(name string) bool {
	_, err := v.w.root.Lstat(name)
	return err == nil
}

// line returns line n of name as read beneath the workspace, cut to 300
// bytes; false when it cannot be read there. The line is not matched
// again (ripgrep's regex dialect is not Go's): if the file changed since
// ripgrep read it, the line shown is still the workspace's own.
func (v *hitVerifier) line(name string, n int) (string, bool) {
	if v.file != name {
		v.file, v.lines = name, nil
		if data, _, err := v.w.readRegular(name, searchMaxFileSize); err == nil && !isBinary(data) {
			v.lines = strings.Split(string(data), "\n")
		}
	}
	if n < 1 || n > len(v.lines) {
		return "", false
	}
	line := v.lines[n-1]
	return line[:min(len(line), 300)], true
}

func splitNUL(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// searchWalk is the bounded fallback without ripgrep: it walks beneath the
// workspace through its os.Root, skips .git and hidden dirs, files over
// 1 MiB, binary and non-regular files, and stops after 20000 files.
func searchWalk(ctx context.Context, w *workspace, rel string, in searchInput) ([]string, bool, error) {
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
	err := fs.WalkDir(w.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != rel && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
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
		if in.Mode == "name" {
			if strings.Contains(strings.ToLower(p), q) && !add(p) {
				return errStop
			}
			return nil
		}
		data, _, err := w.readRegular(p, searchMaxFileSize)
		if err != nil || isBinary(data) {
			return nil
		}
		for i, line := range strings.Split(string(data), "\n") {
			if re.MatchString(line) {
				if len(line) > 300 {
					line = line[:300]
				}
				if !add(fmt.Sprintf("%s:%d:%s", p, i+1, line)) {
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

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
