package agent_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
		goleak.IgnoreAnyFunction("github.com/aos-run/aos/internal/store/sqlite.(*bus).loop"))
}
