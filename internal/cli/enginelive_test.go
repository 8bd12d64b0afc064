package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestRunShowsEngineEventsLive: aos run --engine command:… prints the
// engine's live tool-call line (a transient engine.event, never
// persisted) on its own timeline, between the engine's start and its end,
// as aos mission watch does.
func TestRunShowsEngineEventsLive(t *testing.T) {
	t.Parallel()
	eng := filepath.Join(t.TempDir(), "testengine")
	if out, err := exec.Command("go", "build", "-o", eng, "../backend/testdata/testengine").CombinedOutput(); err != nil {
		t.Fatalf("build test engine: %v\n%s", err, out)
	}
	engine := "command:" + eng
	repo := t.TempDir()
	git := func(args ...string) {
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=o", "-c", "user.email=o@o"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "check.sh"), []byte("test -f hello.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "base")

	var out bytes.Buffer
	s := localSession(t, storetest.New(t, "sqlite"), &out, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := sandbox.New(sandbox.Config{DataDir: s.cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := backend.SelfTest(ctx, sb, engine, "", time.Minute)
	if err != nil || !rec.Passed {
		t.Fatalf("self-test: %+v %v", rec, err)
	}
	b, _ := json.Marshal(rec)
	if err := s.st.PutSetting(ctx, backend.CheckKey(engine), b, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	id, err := s.create(ctx, runFlags{project: repo, engine: engine, network: "none", budgetUSD: 1, maxTurns: 10,
		verify: []string{"/bin/sh check.sh"}, allow: []string{"/bin/sh check.sh"}}, "say hello mode:edit")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.drive(ctx, id); err != nil {
		t.Fatalf("drive: %v\n%s", err, out.String())
	}
	text := out.String()
	started, call, finished := strings.Index(text, "▶ engine "+engine), strings.Index(text, "→ "+engine+" write hello.txt (exit 0)"), strings.Index(text, "◀ engine COMPLETED")
	if started < 0 || call < 0 || finished < 0 || !(started < call && call < finished) {
		t.Fatalf("want the engine's tool call between its start and its end (at %d, %d, %d):\n%s", started, call, finished, text)
	}
}
