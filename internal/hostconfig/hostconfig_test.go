package hostconfig_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/hostconfig"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bundle is one test's project root and user file.
type bundle struct {
	root, user string
}

func setup(t *testing.T, repoYAML, userYAML string) bundle {
	t.Helper()
	b := bundle{root: filepath.Join(t.TempDir(), "proj"), user: filepath.Join(t.TempDir(), "aos", "config.yaml")}
	if err := os.MkdirAll(b.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if repoYAML != "" {
		write(t, filepath.Join(b.root, hostconfig.RepoPath), repoYAML)
	}
	if userYAML != "" {
		write(t, b.user, userYAML)
	}
	return b
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// Write beside, then rename: the watcher never sees a half file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

const repoYAML = `version: 1
defaults:
  model: claude-sonnet-4-5
  effort: low
  network: none
  budgets: {usd: 1.5, max_turns: 40}
aliases: {fast: claude-haiku-4-5, big: claude-opus-4-1}
verification:
  allow: ["go test ./...", "go vet ./..."]
selection:
  rules:
    - id: repo-rule
      targets: [big, fast]
isolation: {mode: worktree}
retention: {max_missions: 100}
`

func TestPrecedence(t *testing.T) {
	t.Parallel()
	b := setup(t, repoYAML, "")
	write(t, b.user, fmt.Sprintf(`version: 1
paths: {worktrees: /var/tmp/aos-wt}
overrides:
  defaults: {model: claude-opus-4-1, budgets: {max_turns: 60}}
  aliases: {fast: gpt-5-mini}
  verification: {allow: ["make check"]}
projects:
  - id: other
    path: /elsewhere
    overrides: {defaults: {effort: max}}
  - path: %s
    overrides:
      defaults: {effort: high}
      selection: {rules: [{id: local, targets: [fast]}]}
`, b.root))
	s, err := hostconfig.Load(b.root, b.user)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Effective("")
	for _, tc := range []struct {
		field, got, want, layer string
	}{
		{"defaults.model", *e.Defaults.Model, "claude-opus-4-1", "user"},
		{"defaults.effort", *e.Defaults.Effort, "high", "user:projects[1]"},
		{"defaults.network", *e.Defaults.Network, "none", "repo"},
		{"defaults.budgets.usd", fmt.Sprint(*e.Defaults.Budgets.USD), "1.5", "repo"},
		{"defaults.budgets.max_turns", fmt.Sprint(*e.Defaults.Budgets.MaxTurns), "60", "user"},
		{"aliases.fast", e.Aliases["fast"], "gpt-5-mini", "user"},
		{"aliases.big", e.Aliases["big"], "claude-opus-4-1", "repo"},
		{"verification.allow", strings.Join(e.Verification.Allow, "|"), "make check", "user"},
		{"selection.rules", e.Selection.Rules[0].ID + fmt.Sprint(len(e.Selection.Rules)), "local1", "user:projects[1]"},
		{"retention.max_missions", fmt.Sprint(*e.Retention.MaxMissions), "100", "repo"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.field, tc.got, tc.want)
		}
		if src := e.Sources[tc.field]; src.Layer != tc.layer || src.Line == 0 {
			t.Errorf("%s comes from %v, want layer %s with a line", tc.field, src, tc.layer)
		}
	}
	if e.Project != 1 || *e.Paths.Worktrees != "/var/tmp/aos-wt" {
		t.Errorf("project %d paths %v", e.Project, e.Paths)
	}
	// The registration matched by id when the path differs.
	if e := s.Effective("other"); *e.Defaults.Effort != "high" {
		t.Errorf("the path match must win over the id match, got effort %s", *e.Defaults.Effort)
	}
	// A deep copy: changing it does not change the snapshot.
	e.Selection.Rules[0].Targets[0] = "mutated"
	e.Aliases["fast"] = "mutated"
	if e2 := s.Effective(""); e2.Selection.Rules[0].Targets[0] != "fast" || e2.Aliases["fast"] != "gpt-5-mini" {
		t.Errorf("Effective leaked the snapshot: %v %v", e2.Selection.Rules, e2.Aliases)
	}
}

func TestArraysReplacedWhole(t *testing.T) {
	t.Parallel()
	b := setup(t, repoYAML, `version: 1
overrides:
  verification: {allow: []}
  isolation: {fallback: [worktree]}
`)
	s, err := hostconfig.Load(b.root, b.user)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Effective("")
	if len(e.Verification.Allow) != 0 || e.Sources["verification.allow"].Layer != "user" {
		t.Errorf("an empty local array must replace the repo's: %v from %v", e.Verification.Allow, e.Sources["verification.allow"])
	}
	if got := e.Selection.Rules; len(got) != 1 || !slices.Equal(got[0].Targets, []string{"big", "fast"}) {
		t.Errorf("an absent local array must keep the repo's: %v", got)
	}
}

func TestStrictErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, repo, user string
		want             string // substring after the file name
	}{
		{"unknown field", "version: 1\ndefaults:\n  modle: x\n", "", ":3: defaults.modle: unknown field"},
		{"credential refused", "version: 1\n", "version: 1\noverrides:\n  defaults: {model: x}\nanthropic_api_key: sk-123\n", ":4: anthropic_api_key: unknown field"},
		{"environment refused", "version: 1\n", "version: 1\nprojects:\n  - path: /p\n    env: {FOO: bar}\n", ":4: projects[0].env: unknown field"},
		{"bad effort", "version: 1\ndefaults:\n  effort: extreme\n", "", ":3: defaults.effort: \"extreme\" is not one of"},
		{"bad type", "version: 1\ndefaults:\n  budgets:\n    usd: lots\n", "", ":4: defaults.budgets.usd: cannot unmarshal"},
		{"relative path", "", "version: 1\npaths:\n  state: rel/dir\n", ":3: paths.state: must be an absolute path"},
		{"relative project", "", "version: 1\nprojects:\n  - path: proj\n", ":3: projects[0].path: must be an absolute path"},
		{"duplicate rule", "version: 1\nselection:\n  rules:\n    - {id: a, targets: [m]}\n    - id: a\n      targets: [n]\n", "", ":5: selection.rules[1].id: duplicate rule id"},
		{"negative limit", "version: 1\nretention:\n  max_age_days: -1\n", "", ":3: retention.max_age_days: must not be negative"},
		{"negative budget", "version: 1\nselection:\n  failure_budgets: {model: -2}\n", "", ":3: selection.failure_budgets.model: must not be negative"},
		{"unsupported isolation", "version: 1\nisolation: {mode: chroot}\n", "", ":2: isolation.mode:"},
		{"two documents", "version: 1\n---\nversion: 1\n", "", ":2: more than one YAML document"},
		{"future version", "version: 2\n", "", ":1: version: unsupported schema version 2"},
		{"no version", "defaults: {model: x}\n", "", ":1: version: unsupported schema version 0"},
		{"empty", "# nothing\n", "", ": empty"},
		{"not a mapping", "- a\n", "", ":1: the document must be a mapping"},
		{"client relative program", "", "version: 1\nclients:\n  - kind: viewer\n    argv: [viewer]\n", ":4: clients[0].argv[0]: must be an absolute path"},
		{"client bad restart", "", "version: 1\nclients:\n  - kind: viewer\n    argv: [/bin/v]\n    restart: always\n", ":5: clients[0].restart: \"always\" is not one of"},
		{"client duplicate kind", "", "version: 1\nclients:\n  - {kind: v, argv: [/bin/v]}\n  - {kind: v, argv: [/bin/w]}\n", ":4: clients[1].kind: client kind \"v\" declared twice"},
		{"client detail to unknown", "", "version: 1\nclients:\n  - {kind: v, argv: [/bin/v], detail_to: [console]}\n", ":3: clients[0].detail_to[0]: \"console\" is not another declared client kind"},
		{"client environment refused", "", "version: 1\nclients:\n  - {kind: v, argv: [/bin/v], env: {TOKEN: x}}\n", ":3: clients[0].env: unknown field"},
		{"unknown failover class", "version: 1\nselection:\n  failover_on: [quota, bored]\n", "", ":3: selection.failover_on[1]:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.repo, tc.user)
			_, err := hostconfig.Load(b.root, b.user)
			var he *hostconfig.Error
			if !errors.As(err, &he) {
				t.Fatalf("Load = %v, want a *hostconfig.Error", err)
			}
			file := filepath.Join(b.root, hostconfig.RepoPath)
			if tc.user != "" {
				file = b.user
			}
			if !strings.Contains(err.Error(), file+tc.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, file+tc.want)
			}
			if strings.Contains(err.Error(), "sk-123") {
				t.Fatalf("the error echoes a credential: %v", err)
			}
		})
	}
}

// treeHash hashes every path, mode, size, mtime and content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestRepoNeverModified(t *testing.T) {
	t.Parallel()
	b := setup(t, repoYAML, "version: 1\noverrides: {defaults: {effort: max}}\n")
	before := treeHash(t, b.root)
	r := hostconfig.NewRegistry(b.user, nil)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	s, err := r.Snapshot(b.root)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Effective("").Select(hostconfig.SelectRequest{})
	write(t, b.user, "version: 1\noverrides: {defaults: {effort: high}}\n")
	waitFor(t, func() bool { s2, _ := r.Snapshot(b.root); return s2.Revision != s.Revision })
	if after := treeHash(t, b.root); after != before {
		t.Fatal("loading and watching the configuration changed the project")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWatcherKeepsLastValid(t *testing.T) {
	t.Parallel()
	b := setup(t, "", "")
	r := hostconfig.NewRegistry(b.user, nil)
	var published []string
	pub := make(chan string, 10)
	r.OnPublish = func(_ string, s *hostconfig.Snapshot) { pub <- s.Revision }
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	s0, err := r.Snapshot(b.root)
	if err != nil {
		t.Fatal(err)
	}
	published = append(published, <-pub)
	// A valid file in a directory that did not exist: picked up.
	write(t, filepath.Join(b.root, hostconfig.RepoPath), repoYAML)
	waitFor(t, func() bool { s, _ := r.Snapshot(b.root); return s.Revision != s0.Revision })
	s1, _ := r.Snapshot(b.root)
	if m := s1.Effective("").Defaults.Model; m == nil || *m != "claude-sonnet-4-5" {
		t.Fatalf("revision %s has model %v", s1.Revision, m)
	}
	// An invalid change: the error is seen, the snapshot stays.
	write(t, filepath.Join(b.root, hostconfig.RepoPath), "version: 1\ndefaults: {model: claude-opus-4-1, secret: x}\n")
	waitFor(t, func() bool { return r.LastError(b.root) != nil })
	if s, _ := r.Snapshot(b.root); s != s1 {
		t.Fatalf("an invalid file replaced the snapshot: %s", s.Revision)
	}
	// Back to the content of s1: valid, but no new revision to publish.
	write(t, filepath.Join(b.root, hostconfig.RepoPath), repoYAML)
	waitFor(t, func() bool { return r.LastError(b.root) == nil })
	if s, _ := r.Snapshot(b.root); s != s1 {
		t.Fatalf("an unchanged revision was published again: %s", s.Revision)
	}
	// An invalid user file: kept out too.
	write(t, b.user, "version: 1\npaths: {state: relative}\n")
	waitFor(t, func() bool { err := r.LastError(b.root); return err != nil && strings.Contains(err.Error(), b.user) })
	if s, _ := r.Snapshot(b.root); s != s1 {
		t.Fatalf("an invalid user file replaced the snapshot: %s", s.Revision)
	}
	write(t, b.user, "version: 1\n")
	waitFor(t, func() bool { s, _ := r.Snapshot(b.root); return s.Revision != s1.Revision })
	s1b, _ := r.Snapshot(b.root)
	// A good repo change: a new revision.
	write(t, filepath.Join(b.root, hostconfig.RepoPath), strings.Replace(repoYAML, "claude-sonnet-4-5", "claude-opus-4-1", 1))
	waitFor(t, func() bool { s, _ := r.Snapshot(b.root); return s.Revision != s1b.Revision })
	s2, _ := r.Snapshot(b.root)
	if m := s2.Effective("").Defaults.Model; *m != "claude-opus-4-1" || r.LastError(b.root) != nil {
		t.Fatalf("revision %s has model %v, error %v", s2.Revision, *m, r.LastError(b.root))
	}
	r.Close()
	close(pub)
	for rev := range pub {
		published = append(published, rev)
	}
	// Only valid, changed revisions were published, each once.
	want := []string{s0.Revision, s1.Revision, s1b.Revision, s2.Revision}
	if !slices.Equal(published, want) {
		t.Fatalf("published %v, want %v", published, want)
	}
	// The pinned revision still reads as it did.
	if m := s1.Effective("").Defaults.Model; *m != "claude-sonnet-4-5" {
		t.Fatalf("the pinned snapshot changed: %s", *m)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	b := setup(t, `version: 1
defaults: {model: fast}
aliases: {fast: m-fast, big: m-big}
selection:
  failover_on: [quota, server]
  failure_budgets: {model: 4}
  rules:
    - id: proj
      when: {project: p1}
      targets: [engine:codex, big]
    - id: fast
      when: {model: fast}
      targets: [fast, big, m-fast]
    - id: any
      targets: [m-other]
`, "")
	s, err := hostconfig.Load(b.root, b.user)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Effective("")
	for _, tc := range []struct {
		name string
		req  hostconfig.SelectRequest
		rule string
		want string
	}{
		{"default model via alias", hostconfig.SelectRequest{}, "fast", "model:m-fast model:m-big"},
		{"explicit stays first", hostconfig.SelectRequest{Model: "big"}, "any", "model:m-big model:m-other"},
		{"project rule, engine target", hostconfig.SelectRequest{ProjectID: "p1"}, "proj", "engine:codex model:m-big"},
		{"explicit matching", hostconfig.SelectRequest{Model: "m-fast"}, "fast", "model:m-fast model:m-big"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := e.Select(tc.req)
			var got []string
			for _, x := range d.Targets {
				got = append(got, x.Kind+":"+x.Name)
			}
			if d.RuleID != tc.rule || strings.Join(got, " ") != tc.want {
				t.Fatalf("Select(%+v) = rule %q %v, want %q %s", tc.req, d.RuleID, got, tc.rule, tc.want)
			}
			if d.Revision != s.Revision || d.PolicyRevision == "" || d.FailureBudgets["model"] != 4 || len(d.FailoverOn) != 2 {
				t.Fatalf("decision %+v", d)
			}
		})
	}
	// No rules, no config: the fallback model alone.
	s2, err := hostconfig.Load(setup(t, "", "").root, b.user)
	if err != nil {
		t.Fatal(err)
	}
	d := s2.Effective("").Select(hostconfig.SelectRequest{Fallback: "m-set"})
	if len(d.Targets) != 1 || d.Targets[0].Name != "m-set" || d.RuleID != "" || d.FailoverOn[0] != "quota" {
		t.Fatalf("decision without config: %+v", d)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(repoYAML))
	f.Add([]byte("version: 1\nprojects: [{path: /a, overrides: {aliases: {a: b}}}]\n"))
	f.Add([]byte("version: 1\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err1 := hostconfig.ParseRepo("r", data)
		_, err2 := hostconfig.ParseUser("u", data)
		for _, err := range []error{err1, err2} {
			var he *hostconfig.Error
			if err != nil && !errors.As(err, &he) {
				t.Fatalf("error of another type: %T %v", err, err)
			}
		}
	})
}

func BenchmarkLoadEffectiveSelect(b *testing.B) {
	root := filepath.Join(b.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(root, ".aos"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, hostconfig.RepoPath), []byte(repoYAML), 0o644); err != nil {
		b.Fatal(err)
	}
	user := filepath.Join(b.TempDir(), "config.yaml")
	for b.Loop() {
		s, err := hostconfig.Load(root, user)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Effective("").Select(hostconfig.SelectRequest{})
	}
}
