package tool_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/tool"
)

// TestWriteReplayAfterCrash models issue 11 item 3: a write_file or
// edit_file call ran (its rename happened) but the worker was killed
// before the journal recorded it, so on resume the same call runs again
// with the file state the run had before it. The replay must succeed
// without writing again; a real change by someone else must still be
// refused as stale; and Reconcile must say done / not done.
func TestWriteReplayAfterCrash(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	tc.FileState = map[string]string{}
	ws := tc.Workspace
	absorb := func(r tool.Result) {
		for k, v := range r.FileStateOut {
			tc.FileState[k] = v
		}
	}
	ctx := context.Background()
	reconcile := func(tl tool.Tool, in map[string]any) tool.ReconcileState {
		t.Helper()
		rec, err := tl.(tool.Reconciler).Reconcile(ctx, tc, js(t, in))
		if err != nil {
			t.Fatal(err)
		}
		return rec.State
	}

	// write_file creating a new file.
	create := map[string]any{"path": "new/config.ini", "content": "a=1\nb=1\n"}
	if got := reconcile(tool.WriteFile(), create); got != tool.ReconcileNotDone {
		t.Errorf("reconcile before the write: %s", got)
	}
	if res := run(t, tool.WriteFile(), tc, create); !res.OK {
		t.Fatal(res.Output)
	}
	// Crash: the result above is never absorbed. Replay:
	if got := reconcile(tool.WriteFile(), create); got != tool.ReconcileDone {
		t.Errorf("reconcile after the write: %s", got)
	}
	res := run(t, tool.WriteFile(), tc, create)
	if !res.OK {
		t.Fatalf("replayed write_file failed: %s", res.Output)
	}
	absorb(res)

	// edit_file, single and replaceAll.
	p := filepath.Join(ws, "new/config.ini")
	for _, edit := range []map[string]any{
		{"path": "new/config.ini", "oldString": "a=1", "newString": "a=2", "replaceAll": nil},
		{"path": "new/config.ini", "oldString": "=", "newString": " = ", "replaceAll": true},
	} {
		before := read(t, p)
		if got := reconcile(tool.EditFile(), edit); got != tool.ReconcileNotDone {
			t.Errorf("reconcile %v before the edit: %s", edit, got)
		}
		if res := run(t, tool.EditFile(), tc, edit); !res.OK {
			t.Fatal(res.Output)
		}
		after := read(t, p)
		if got := reconcile(tool.EditFile(), edit); got != tool.ReconcileDone {
			t.Errorf("reconcile %v after the edit: %s", edit, got)
		}
		res := run(t, tool.EditFile(), tc, edit)
		if !res.OK {
			t.Fatalf("replayed edit %v failed: %s", edit, res.Output)
		}
		if got := read(t, p); got != after || before == after {
			t.Fatalf("replay changed the file: %q, want %q", got, after)
		}
		absorb(res)
	}
	if got := read(t, p); got != "a = 2\nb = 1\n" {
		t.Fatalf("file %q", got)
	}

	// Negative control: a change that is not this call's is still stale.
	write(t, p, "a = 2\nb = 1\nc = 9\n")
	edit := map[string]any{"path": "new/config.ini", "oldString": "b = 1", "newString": "b = 5", "replaceAll": nil}
	if res := run(t, tool.EditFile(), tc, edit); res.OK || !strings.Contains(res.Output, "changed since") {
		t.Errorf("edit over someone else's change: ok=%v %s", res.OK, res.Output)
	}
	if got := reconcile(tool.EditFile(), edit); got != tool.ReconcileUnknown {
		t.Errorf("reconcile over someone else's change: %s", got)
	}
	if res := run(t, tool.WriteFile(), tc, map[string]any{"path": "new/config.ini", "content": "other"}); res.OK {
		t.Errorf("write over someone else's change allowed: %s", res.Output)
	}
}
