package cli

import (
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestMissionRetry: aos mission retry takes a prefix of an ended mission's
// id and starts a new mission with its spec; a live one is refused with
// the server's reason and exit 1.
func TestMissionRetry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		ws := r.workspace("p")
		var m mission.Mission
		r.okJSON(&m, "mission", "create", "retry me", "--workspace", ws, "--model", "claude-opus-5-5", "--criteria", "it works")
		if _, errOut, code := r.aos("mission", "retry", m.ID[:8]); code != 1 || !strings.Contains(errOut, "only an ended mission can be retried") {
			t.Fatalf("retry of a live mission: exit %d %s", code, errOut)
		}
		r.ok("mission", "cancel", m.ID)
		out := r.ok("mission", "retry", m.ID[:8])
		if !strings.Contains(out, "created from "+m.ID) || !strings.Contains(out, "aos mission watch ") {
			t.Fatalf("retry: %s", out)
		}
		var ms []mission.Mission
		r.okJSON(&ms, "mission", "ls")
		if len(ms) != 2 || ms[0].Title != "retry me" || ms[0].ID == m.ID || ms[0].Status != "queued" {
			t.Fatalf("missions after the retry: %+v", ms)
		}
	})
}
