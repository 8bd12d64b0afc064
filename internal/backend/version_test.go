package backend_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/testbin"
)

// Each adapter checks `TOOL --version` of the installed tool: a supported
// version is reported, any other is an UnsupportedVersionError naming the
// version found and the versions supported. The tools here are scripts
// printing what the real tools print (OpenClaw 2026.9.6, Claude Code
// 2.1.328, codex-cli 0.169.0) and versions out of range.
func TestToolVersions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		engine, variable, printed string
		ok                        bool
	}{
		{"openclaw", "AOS_OPENCLAW_PATH", `printf '\nOpenClaw 2026.9.6 (eb377ac)\n'`, true},
		{"openclaw", "AOS_OPENCLAW_PATH", `echo 'OpenClaw 2026.10.1 (abc1234)'`, false},
		{"openclaw", "AOS_OPENCLAW_PATH", `echo 'OpenClaw 2025.9.6'`, false},
		{"claude", "AOS_CLAUDE_PATH", `echo '2.1.328 (Claude Code)'`, true},
		{"claude", "AOS_CLAUDE_PATH", `echo '3.0.1 (Claude Code)'`, false},
		{"codex", "AOS_CODEX_PATH", `echo 'codex-cli 0.169.0'`, true},
		{"codex", "AOS_CODEX_PATH", `echo 'codex-cli 0.201.0'`, false},
	} {
		tool := filepath.Join(t.TempDir(), c.engine)
		testbin.WriteExecutable(t, tool, []byte("#!/bin/sh\n"+c.printed+"\n"))
		getenv := func(k string) string {
			if k == c.variable {
				return tool
			}
			return ""
		}
		status, err := backend.ToolStatus(context.Background(), c.engine, getenv)
		var uv *backend.UnsupportedVersionError
		switch {
		case c.ok && (err != nil || !strings.Contains(status, "installed: ")):
			t.Errorf("%s %q: %q %v, want supported", c.engine, c.printed, status, err)
		case !c.ok && !errors.As(err, &uv):
			t.Errorf("%s %q: %q %v, want an UnsupportedVersionError", c.engine, c.printed, status, err)
		case !c.ok && (uv.Found == "" || !strings.Contains(c.printed, uv.Found) || uv.Supported == "" || !strings.Contains(err.Error(), uv.Supported)):
			t.Errorf("%s: error %v does not name the version found and those supported", c.engine, err)
		}
	}
}
