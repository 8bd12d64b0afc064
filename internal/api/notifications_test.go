package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// approvalLogic asks for one approval, as the engine does before a risky
// tool call, and ends done.
func approvalLogic(detail string) kernel.Logic {
	return func(rc kernel.RunContext) (kernel.Result, error) {
		out, err := rc.Wait(kernel.WaitApproval, map[string]any{"tool": "shell", "title": "Run the tests", "detail": detail, "risk": "network"}, 0)
		if err != nil {
			return kernel.Result{}, err
		}
		return kernel.Result{Status: kernel.StatusDone, Summary: "approved: " + string(out.Resolution)}, nil
	}
}

func TestNotifications(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		longDetail := strings.Repeat("go test ./... ", 200)
		wctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = b.k.RunWorker(wctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{engine.LogicName: approvalLogic(longDetail)}})
		}()
		t.Cleanup(func() { stop(); wg.Wait() })

		list := func(query string) []mission.Notification {
			t.Helper()
			var ns []mission.Notification
			b.ok("GET", "/notifications"+query, nil, &ns)
			return ns
		}
		var none []mission.Notification
		if none = list(""); len(none) != 0 {
			t.Fatalf("notifications before anything happened: %+v", none)
		}
		m := b.createMission()
		// The approval appears once the run waits.
		var ns []mission.Notification
		waitFor(t, 10*time.Second, "the approval notification", func() bool { ns = list(""); return len(ns) == 1 })
		ap := ns[0]
		if ap.Kind != mission.NotifyApproval || ap.Title != "Approval needed: Run the tests" || ap.MissionID != m.ID || ap.RunID != m.RootRunID || ap.Read || ap.ID <= 0 || ap.At == 0 {
			t.Fatalf("approval notification %+v", ap)
		}
		if n := utf8.RuneCountInString(ap.Body); n != 500 || !strings.HasPrefix(ap.Body, "go test ./...") || !strings.HasSuffix(ap.Body, "…") {
			t.Fatalf("approval body of %d characters: %q", n, ap.Body)
		}
		// Answer it; the mission finishes and says so.
		var waits []mission.Wait
		b.ok("GET", "/waits?status=pending", nil, &waits)
		if len(waits) != 1 {
			t.Fatalf("pending waits %+v", waits)
		}
		b.ok("POST", "/waits/"+waits[0].ID+"/resolve", map[string]any{"approved": true}, nil)
		waitFor(t, 10*time.Second, "the finished notification", func() bool { ns = list(""); return len(ns) == 2 })
		fin := ns[0]
		if fin.Kind != mission.NotifyFinished || fin.Title != "Mission done: fix the test" || !strings.HasPrefix(fin.Body, "approved: ") || fin.MissionID != m.ID || fin.ID <= ap.ID || ns[1].ID != ap.ID {
			t.Fatalf("notifications %+v", ns)
		}
		// A cancelled mission is finished too (the kernel ends its idle
		// root run without a worker).
		stop()
		wg.Wait()
		c := b.createMission()
		b.ok("POST", "/missions/"+c.ID+"/cancel", nil, nil)
		ns = list("?unread=true")
		if len(ns) != 3 || ns[0].MissionID != c.ID || ns[0].Title != "Mission cancelled: fix the test" {
			t.Fatalf("after a cancel: %+v", ns)
		}
		if ns = list("?limit=1"); len(ns) != 1 || ns[0].MissionID != c.ID {
			t.Fatalf("limit=1: %+v", ns)
		}

		// Mark one read, then the rest.
		var res mission.MarkReadResult
		b.ok("POST", "/notifications/read", map[string]any{"ids": []int64{ap.ID, ap.ID, 999999}}, &res)
		if res.Marked != 1 {
			t.Fatalf("marked %d, want 1", res.Marked)
		}
		ns = list("?unread=true")
		if len(ns) != 2 || ns[1].ID != fin.ID {
			t.Fatalf("unread after marking the approval: %+v", ns)
		}
		if all := list("?unread=false"); len(all) != 3 || !all[2].Read || all[0].Read {
			t.Fatalf("read flags: %+v", all)
		}
		b.ok("POST", "/notifications/read", map[string]any{"all": true}, &res)
		if res.Marked != 2 {
			t.Fatalf("marked all: %d, want 2", res.Marked)
		}
		if ns = list("?unread=true"); len(ns) != 0 {
			t.Fatalf("unread after all: %+v", ns)
		}
		b.ok("POST", "/notifications/read", map[string]any{"all": true}, &res)
		if res.Marked != 0 {
			t.Fatalf("marked all again: %d, want 0", res.Marked)
		}
		// Read state is in the database: a second service on the same
		// database sees it.
		other := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: b.root})
		if got, err := other.ListNotifications(context.Background(), mission.ListNotificationsRequest{UnreadOnly: true}); err != nil || len(got) != 0 {
			t.Fatalf("another server's unread: %+v, %v", got, err)
		}

		// Bad bodies and queries change nothing.
		for _, body := range []string{`{}`, `{"ids":[]}`, `{"all":false}`, `{"ids":[1],"all":true}`, `{"ids":[0]}`, `{"ids":[-3]}`,
			`{"ids":"1"}`, `{"all":"yes"}`, `{"ids":[1],"extra":1}`, `[1]`, ``, `{"ids":[1]} {}`,
			fmt.Sprintf(`{"ids":[%s1]}`, strings.Repeat("1,", 1000))} {
			status, out := b.do("POST", "/notifications/read", body, b.write)
			if status != 400 {
				t.Errorf("POST /notifications/read %s: %d %s, want 400", body, status, out)
			}
		}
		for _, q := range []string{"?limit=0x", "?limit=201", "?limit=-1", "?unread=yes"} {
			status, out := b.do("GET", "/notifications"+q, nil, b.write)
			if status != 400 {
				t.Errorf("GET /notifications%s: %d %s, want 400", q, status, out)
			}
		}
		if st, _ := b.do("POST", "/notifications/read", `{"all":true}`, b.read); st != 403 {
			t.Errorf("mark read with a read-only token: %d, want 403", st)
		}
		var raw json.RawMessage
		b.ok("GET", "/notifications", nil, &raw)
		for _, field := range []string{`"id"`, `"at"`, `"kind"`, `"missionId"`, `"runId"`, `"title"`, `"body"`, `"read"`} {
			if !strings.Contains(string(raw), field) {
				t.Errorf("notification JSON lacks %s: %.300s", field, raw)
			}
		}
	})
}
