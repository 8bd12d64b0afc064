package script

import (
	"testing"
)

// StartForTest parses scriptYAML (a set or a single script named "test";
// empty for the built-ins only), starts a server on loopback and closes it
// when the test ends.
func StartForTest(tb testing.TB, scriptYAML string) *Server {
	tb.Helper()
	set := &Set{}
	if scriptYAML != "" {
		var err error
		if set, err = Parse([]byte(scriptYAML), "test"); err != nil {
			tb.Fatalf("parse script: %v", err)
		}
	}
	srv, err := Start(set, "", Options{})
	if err != nil {
		tb.Fatalf("start scripted model server: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}
