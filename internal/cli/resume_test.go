package cli

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestResolveLocalMission(t *testing.T) {
	db := storetest.New(t, "sqlite")
	st := db.Store
	svc := localSession(t, db, io.Discard, nil).service()
	ctx := context.Background()
	ids := []string{"abcd1111-0000-4000-8000-000000000000", "abcd2222-0000-4000-8000-000000000000"}
	for i, id := range ids {
		if err := st.InsertMission(ctx, store.Mission{ID: id, Status: "queued", RootRunID: "r", CreatedAt: int64(i), UpdatedAt: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		arg, want string
		code      exitCode // the exit code of the error, 0 for none
	}{
		{"abcd1", ids[0], 0},
		{ids[1], ids[1], 0},
		{"abcd", "", exitUsage}, // ambiguous
		{"ffff", "", 4},         // none
		{"ffffffff-0000-4000-8000-000000000000", "", exitNotFound},
		{"", "", exitUsage},
	} {
		got, err := resolveLocalMission(ctx, svc, c.arg)
		var ee *exitError
		code := exitOK
		if errors.As(err, &ee) {
			code = ee.code
		} else if err != nil {
			code = -1
		}
		if got != c.want || code != c.code {
			t.Errorf("resolve %q = %q, %v (exit %d); want %q, exit %d", c.arg, got, err, code, c.want, c.code)
		}
	}
}
