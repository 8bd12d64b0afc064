package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/aos-run/aos/internal/termtext"
)

// MaxFileSize bounds a configuration file.
const MaxFileSize = 1 << 20

// Error is a refused configuration file: which file, where, and why.
type Error struct {
	File  string
	Line  int    // 0 when unknown
	Field string // dotted path, e.g. selection.rules[1].id; empty when none
	Msg   string
}

// Error implements error: "hostconfig: FILE:LINE: FIELD: MSG".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hostconfig: ")
	b.WriteString(termtext.Line(e.File))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + termtext.Line(e.Field))
	}
	b.WriteString(": " + termtext.Line(e.Msg))
	return b.String()
}

// parsed is one decoded file with its node tree, for line lookups.
type parsed struct {
	file string
	root *yaml.Node // the document's top mapping
}

// decode strictly decodes data (one YAML document, known fields only) into
// v and returns its node tree.
func decode(file string, data []byte, v any) (*parsed, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("larger than %d bytes", MaxFileSize)}
	}
	var doc yaml.Node
	nd := yaml.NewDecoder(bytes.NewReader(data))
	if err := nd.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: file, Msg: "empty: want one YAML document with version: " + strconv.Itoa(SchemaVersion)}
		}
		return nil, yamlError(file, nil, err)
	}
	var extra yaml.Node
	if err := nd.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, yamlError(file, nil, err)
		}
		return nil, &Error{File: file, Line: line, Msg: "more than one YAML document"}
	}
	p := &parsed{file: file}
	if len(doc.Content) == 1 {
		p.root = doc.Content[0]
	}
	if p.root == nil || p.root.Kind != yaml.MappingNode {
		return nil, &Error{File: file, Line: doc.Line, Msg: "the document must be a mapping"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return nil, yamlError(file, p, err)
	}
	return p, nil
}

var (
	lineRe    = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownRe = regexp.MustCompile(`^field (\S+) not found in type`)
)

// yamlError turns the YAML library's error into an *Error with the first
// problem's line and field.
func yamlError(file string, p *parsed, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	e := &Error{File: file, Msg: msg}
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = m[2]
	}
	if m := unknownRe.FindStringSubmatch(e.Msg); m != nil {
		e.Msg = "unknown field (credentials and environment values have no field here)"
		if p != nil {
			e.Field = p.fieldAt(e.Line, m[1])
		}
		if e.Field == "" {
			e.Field = m[1]
		}
	} else if p != nil && e.Line > 0 {
		e.Field = p.fieldAt(e.Line, "")
	}
	return e
}

// fieldAt returns the dotted path of the key on line (named key when not
// empty), or "".
func (p *parsed) fieldAt(line int, key string) string {
	var walk func(n *yaml.Node, path string) string
	walk = func(n *yaml.Node, path string) string {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				sub := join(path, k.Value)
				if k.Line == line && (key == "" || k.Value == key) {
					return sub
				}
				if r := walk(v, sub); r != "" {
					return r
				}
				if v.Line == line && v.Kind == yaml.ScalarNode && key == "" {
					return sub
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				sub := fmt.Sprintf("%s[%d]", path, i)
				if r := walk(c, sub); r != "" {
					return r
				}
				if c.Line == line && c.Kind == yaml.ScalarNode && key == "" {
					return sub
				}
			}
		}
		return ""
	}
	return walk(p.root, "")
}

// lineOf returns the line of the field at a dotted path ("a.b[2].c"), or
// of its nearest present ancestor.
func (p *parsed) lineOf(path string) int {
	n, line := p.root, p.root.Line
	for _, part := range splitPath(path) {
		if n == nil {
			break
		}
		var next *yaml.Node
		if idx, err := strconv.Atoi(part); err == nil && n.Kind == yaml.SequenceNode {
			if idx < len(n.Content) {
				next, line = n.Content[idx], n.Content[idx].Line
			}
		} else if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					next, line = n.Content[i+1], n.Content[i].Line
					break
				}
			}
		}
		n = next
	}
	return line
}

func splitPath(path string) []string {
	path = strings.NewReplacer("[", ".", "]", "").Replace(path)
	if path == "" {
		return nil
	}
	return strings.Split(path, ".")
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// checker collects the first validation error of a file.
type checker struct {
	p   *parsed
	err *Error
}

func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = &Error{File: c.p.file, Line: c.p.lineOf(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (c *checker) version(v int) {
	if v != SchemaVersion {
		c.fail("version", "unsupported schema version %d (want %d)", v, SchemaVersion)
	}
}

func (c *checker) oneOf(field string, v *string, allowed map[string]bool) {
	if v != nil && !allowed[*v] {
		c.fail(field, "%q is not one of %s", *v, keys(allowed))
	}
}

func (c *checker) nonNegative(field string, v *int) {
	if v != nil && *v < 0 {
		c.fail(field, "must not be negative")
	}
}

func (c *checker) absPath(field string, v string) {
	if v == "" {
		c.fail(field, "is required")
	} else if !filepath.IsAbs(v) {
		c.fail(field, "must be an absolute path")
	}
}

func (c *checker) text(field, v string) {
	if strings.TrimSpace(v) == "" || termtext.Controls(v) || strings.ContainsAny(v, "\n\r\t") || len(v) > 1000 {
		c.fail(field, "must be one non-empty line of at most 1000 bytes, without control or format characters")
	}
}

// layer validates a Layer found at prefix.
func (c *checker) layer(prefix string, l *Layer) {
	f := func(s string) string { return join(prefix, s) }
	d := &l.Defaults
	if d.Model != nil {
		c.text(f("defaults.model"), *d.Model)
	}
	c.oneOf(f("defaults.effort"), d.Effort, efforts)
	c.oneOf(f("defaults.network"), d.Network, networks)
	if d.Engine != nil {
		c.text(f("defaults.engine"), *d.Engine)
	}
	if u := d.Budgets.USD; u != nil && (*u < 0 || *u > 1e6 || math.IsNaN(*u)) {
		c.fail(f("defaults.budgets.usd"), "must be between 0 and 1000000")
	}
	c.nonNegative(f("defaults.budgets.max_turns"), d.Budgets.MaxTurns)
	if w := d.Budgets.MaxWallSec; w != nil && *w < 0 {
		c.fail(f("defaults.budgets.max_wall_sec"), "must not be negative")
	}
	for _, k := range sortedKeys(l.Aliases) {
		c.text(f("aliases."+k), k)
		c.text(f("aliases."+k), l.Aliases[k])
	}
	for i, a := range l.Verification.Allow {
		c.text(f(fmt.Sprintf("verification.allow[%d]", i)), a)
	}
	ids := map[string]int{}
	for i, r := range l.Selection.Rules {
		rf := f(fmt.Sprintf("selection.rules[%d]", i))
		if r.ID == "" {
			c.fail(rf, "id is required")
		} else if j, dup := ids[r.ID]; dup {
			c.fail(rf+".id", "duplicate rule id %q (also rules[%d])", r.ID, j)
		}
		ids[r.ID] = i
		if len(r.Targets) == 0 {
			c.fail(rf+".targets", "a rule needs at least one target")
		}
		for j, t := range r.Targets {
			c.text(fmt.Sprintf("%s.targets[%d]", rf, j), t)
		}
	}
	for i, cl := range l.Selection.FailoverOn {
		c.oneOf(f(fmt.Sprintf("selection.failover_on[%d]", i)), &cl, classes)
	}
	for _, st := range sortedKeys(l.Selection.FailureBudgets) {
		n := l.Selection.FailureBudgets[st]
		if !budgetStages[st] {
			c.fail(f("selection.failure_budgets."+st), "unknown stage (want one of %s)", keys(budgetStages))
		}
		c.nonNegative(f("selection.failure_budgets."+st), &n)
	}
	c.oneOf(f("isolation.mode"), l.Isolation.Mode, isolations)
	for i, m := range l.Isolation.Fallback {
		c.oneOf(f(fmt.Sprintf("isolation.fallback[%d]", i)), &m, isolations)
	}
	c.nonNegative(f("retention.max_missions"), l.Retention.MaxMissions)
	c.nonNegative(f("retention.max_age_days"), l.Retention.MaxAgeDays)
	c.nonNegative(f("retention.max_log_mb"), l.Retention.MaxLogMB)
}

// ParseRepo strictly parses a repo-global file's content; file names it in
// errors.
func ParseRepo(file string, data []byte) (*RepoFile, error) {
	rf, _, err := parseRepo(file, data)
	return rf, err
}

func parseRepo(file string, data []byte) (*RepoFile, *parsed, error) {
	var rf RepoFile
	p, err := decode(file, data, &rf)
	if err != nil {
		return nil, nil, err
	}
	c := &checker{p: p}
	c.version(rf.Version)
	c.layer("", &rf.Layer)
	if c.err != nil {
		return nil, nil, c.err
	}
	return &rf, p, nil
}

var clientKind = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`) })

// ParseUser strictly parses a user-local file's content.
func ParseUser(file string, data []byte) (*UserFile, error) {
	uf, _, err := parseUser(file, data)
	return uf, err
}

func parseUser(file string, data []byte) (*UserFile, *parsed, error) {
	var uf UserFile
	p, err := decode(file, data, &uf)
	if err != nil {
		return nil, nil, err
	}
	c := &checker{p: p}
	c.version(uf.Version)
	for _, pf := range []struct {
		name string
		v    *string
	}{{"state", uf.Paths.State}, {"worktrees", uf.Paths.Worktrees}, {"logs", uf.Paths.Logs}, {"temp", uf.Paths.Temp}, {"cache", uf.Paths.Cache}} {
		if pf.v != nil {
			c.absPath("paths."+pf.name, *pf.v)
		}
	}
	c.layer("overrides", &uf.Overrides)
	paths, ids := map[string]int{}, map[string]int{}
	for i, pr := range uf.Projects {
		pf := fmt.Sprintf("projects[%d]", i)
		c.absPath(pf+".path", pr.Path)
		if j, dup := paths[filepath.Clean(pr.Path)]; dup && pr.Path != "" {
			c.fail(pf+".path", "project registered twice (also projects[%d])", j)
		}
		paths[filepath.Clean(pr.Path)] = i
		if j, dup := ids[pr.ID]; dup && pr.ID != "" {
			c.fail(pf+".id", "duplicate project id %q (also projects[%d])", pr.ID, j)
		}
		ids[pr.ID] = i
		c.layer(pf+".overrides", &uf.Projects[i].Overrides)
	}
	kinds := map[string]int{}
	for i, cp := range uf.Clients {
		pf := fmt.Sprintf("clients[%d]", i)
		if !clientKind().MatchString(cp.Kind) {
			c.fail(pf+".kind", "want [a-z][a-z0-9-]{0,31}")
		}
		if j, dup := kinds[cp.Kind]; dup {
			c.fail(pf+".kind", "client kind %q declared twice (also clients[%d])", cp.Kind, j)
		}
		kinds[cp.Kind] = i
		if len(cp.Argv) == 0 {
			c.fail(pf+".argv", "want the program's absolute path and its arguments")
		} else {
			c.absPath(pf+".argv[0]", cp.Argv[0])
		}
		if cp.Restart != "" {
			r := cp.Restart
			c.oneOf(pf+".restart", &r, map[string]bool{"never": true, "on-crash": true})
		}
		mr := cp.MaxRestarts
		c.nonNegative(pf+".max_restarts", &mr)
	}
	for i, cp := range uf.Clients {
		for j, k := range cp.DetailTo {
			if _, ok := kinds[k]; !ok || k == cp.Kind {
				c.fail(fmt.Sprintf("clients[%d].detail_to[%d]", i, j), "%q is not another declared client kind", k)
			}
		}
	}
	if c.err != nil {
		return nil, nil, c.err
	}
	return &uf, p, nil
}
