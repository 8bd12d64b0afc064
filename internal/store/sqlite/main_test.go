package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/sqlite"
)

func TestMain(m *testing.M) {
	if os.Getenv("AOS_TEST_CHILD") == "subscriber" {
		os.Exit(subscriberChild(os.Getenv("AOS_TEST_DB")))
	}
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

// subscriberChild subscribes to the database's events, says "ready" and
// waits to be killed.
func subscriberChild(path string) int {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	if _, err := s.Subscribe(ctx, store.ChannelEvents); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ready")
	select {}
}
