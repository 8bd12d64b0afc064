package script

import "testing"

// StartForTest starts a server with scriptYAML for one test.
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
		tb.Fatalf("start: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}
