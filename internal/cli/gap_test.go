package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestWatchFollowsGap: with more than api.MaxReplay events behind it, the
// watch prints the replayed ones, says that the rest was skipped, goes on
// live from the server's latest id and ends at the mission's end.
func TestWatchFollowsGap(t *testing.T) {
	r := setupRemote(t, storetest.New(t, "sqlite"))
	ctx := context.Background()
	m, err := r.svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "many", Workspace: r.workspace("p"), Model: "claude-opus-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	before, err := r.st.ListEvents(ctx, store.ListEventsParams{MissionID: m.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	const total = api.MaxReplay + 100
	if err := r.st.Tx(ctx, func(q store.Queries) error {
		for i := 0; i < total; i++ {
			p, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("tick %d", i)})
			if _, err := q.InsertEvent(ctx, store.Event{MissionID: m.ID, RunID: m.RootRunID, Kind: "owner.message", Payload: p, CreatedAt: 1}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	live := &syncBuffer{}
	done := make(chan string, 1)
	go func() {
		out, errOut, code := runAOS(ctx, r.clientEnv(""), live, "mission", "watch", m.ID)
		done <- fmt.Sprintf("exit %d\n%s", code, errOut)
		_ = out
	}()
	waitFor(t, 20*time.Second, "the gap notice", func() bool { return strings.Contains(live.String(), "not replayed") }, live.String)
	r.emit(m.ID, m.RootRunID, "owner.message", map[string]string{"text": "after the gap"})
	r.emit(m.ID, m.RootRunID, "run.completed", map[string]string{"status": "failed", "summary": "gave up"})
	select {
	case res := <-done:
		if !strings.HasPrefix(res, fmt.Sprintf("exit %d\n", exitUnfinished)) || !strings.Contains(res, "ended failed") {
			t.Fatalf("watch: %s", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not end")
	}
	out := live.String()
	ticks := regexp.MustCompile(`✉ owner: tick \d+`).FindAllString(out, -1)
	want := api.MaxReplay - len(before) // the replay holds the mission's first events too
	if len(ticks) != want {
		t.Fatalf("%d ticks replayed, want the first %d", len(ticks), want)
	}
	for i, tk := range ticks {
		if tk != fmt.Sprintf("✉ owner: tick %d", i) {
			t.Fatalf("tick line %d is %q", i, tk)
		}
	}
	assertInOrder(t, out, []string{"not replayed", "✉ owner: after the gap", "■ failed — gave up"})
}
