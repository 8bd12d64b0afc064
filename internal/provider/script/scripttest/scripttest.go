// Package scripttest starts the scripted model server for tests. It is
// apart from package script so that binaries that serve scripts (aos dev
// model-server) do not link the testing package.
package scripttest

import (
	"testing"

	"github.com/aos-run/aos/internal/provider/script"
)

// Start parses scriptYAML (a set, or a single script named "test"; empty
// for the built-ins only), starts a server on loopback and closes it when
// the test ends.
func Start(tb testing.TB, scriptYAML string) *script.Server {
	tb.Helper()
	set := &script.Set{}
	if scriptYAML != "" {
		var err error
		if set, err = script.Parse([]byte(scriptYAML), "test"); err != nil {
			tb.Fatalf("parse script: %v", err)
		}
	}
	srv, err := script.Start(set, "", script.Options{})
	if err != nil {
		tb.Fatalf("start scripted model server: %v", err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}
