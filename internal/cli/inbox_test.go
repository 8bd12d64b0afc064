package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestInbox: a cancelled mission shows in aos inbox as unread; aos inbox
// read ID marks it; --all still lists it; read with no ids marks the
// rest; a bad id is a usage error that marks nothing.
func TestInbox(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		ws := r.workspace("p")
		if out := r.ok("inbox"); !strings.Contains(out, "no unread notifications") {
			t.Fatalf("empty inbox: %s", out)
		}
		var ids []string
		for i := range 2 {
			var m mission.Mission
			r.okJSON(&m, "mission", "create", fmt.Sprintf("mission %d", i), "--workspace", ws, "--model", "claude-opus-5-5")
			r.ok("mission", "cancel", m.ID)
			ids = append(ids, m.ID)
		}
		var ns []mission.Notification
		r.okJSON(&ns, "inbox")
		if len(ns) != 2 || ns[0].Kind != "mission_finished" || ns[0].Read || ns[0].MissionID != ids[1] {
			t.Fatalf("inbox: %+v", ns)
		}
		out := r.ok("inbox")
		if !strings.Contains(out, fmt.Sprint(ns[1].ID)+" *") || !strings.Contains(out, short(ids[0])) {
			t.Fatalf("inbox table:\n%s", out)
		}
		if _, errOut, code := r.aos("inbox", "read", "x1"); code != exitUsage || !strings.Contains(errOut, "not a notification id") {
			t.Fatalf("bad id: exit %d %s", code, errOut)
		}
		if out := r.ok("inbox", "read", fmt.Sprint(ns[1].ID)); !strings.Contains(out, "1 marked read") {
			t.Fatalf("read one: %s", out)
		}
		r.okJSON(&ns, "inbox")
		if len(ns) != 1 || ns[0].MissionID != ids[1] {
			t.Fatalf("unread after reading one: %+v", ns)
		}
		r.okJSON(&ns, "inbox", "--all")
		if len(ns) != 2 {
			t.Fatalf("--all: %+v", ns)
		}
		if out := r.ok("inbox", "read"); !strings.Contains(out, "1 marked read") {
			t.Fatalf("read all: %s", out)
		}
		if out := r.ok("inbox"); !strings.Contains(out, "no unread notifications") {
			t.Fatalf("after read all: %s", out)
		}
	})
}
