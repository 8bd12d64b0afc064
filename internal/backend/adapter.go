package backend

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// adapter maps a mission onto a tool's documented headless mode.
type adapter struct {
	// bin is the tool's executable name; pathEnv overrides PATH lookup.
	bin, pathEnv string
	// versionRe accepts `bin --version`'s output; supported names the
	// versions for messages.
	versionRe func() *regexp.Regexp
	supported string
	// prepare sets the launch: argv, env, stdin, result parser.
	prepare func(l *launch, path, model string) error
	// event maps one stdout line to a live timeline event.
	event func(line []byte) (map[string]any, bool)
	// final, when set, maps the whole stdout to timeline events once the
	// tool has exited (a tool that prints one envelope at the end).
	final func(out []byte) []map[string]any
}

var adapters = map[string]adapter{
	"claude": {bin: "claude", pathEnv: "AOS_CLAUDE_PATH", versionRe: claudeVersions, supported: ClaudeSupported,
		prepare: func(l *launch, path, model string) error {
			l.Argv = claudeArgv(path, model, l.Request)
			l.Env = append(l.Env, claudeEnv...)
			l.Stdin, l.Parse, l.MaxOut = "/dev/null", claudeResult, 64<<20
			return nil
		}, event: claudeEvent},
	"codex": {bin: "codex", pathEnv: "AOS_CODEX_PATH", versionRe: codexVersions, supported: CodexSupported,
		prepare: prepareCodex, event: codexEvent},
	"openclaw": {bin: "openclaw", pathEnv: "AOS_OPENCLAW_PATH", versionRe: openclawVersions, supported: OpenClawSupported,
		prepare: prepareOpenClaw, event: func([]byte) (map[string]any, bool) { return nil, false }, final: openclawEvents},
}

// UnsupportedVersionError: an installed tool's version is not one its
// adapter supports.
type UnsupportedVersionError struct {
	Engine, Path string
	// Found is what `TOOL --version` printed (its last line, clipped).
	Found string
	// Supported names the versions the adapter supports.
	Supported string
}

// Error names the engine, the version found and the versions supported.
func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("engine %s: version %q (%s) is not supported; supported: %s", e.Engine, e.Found, e.Path, e.Supported)
}

// launch prepares l to run the tool at path, and shows the tool's install
// read-only in the sandbox: the npm prefix holding its node_modules (a
// launcher such as codex.js needs its package and platform binary) or,
// outside node_modules, the tool's directory (the OpenClaw launcher of
// scripts/engines-install.sh, with its Node beside it). The sandbox shows
// an exposed path only where it would hide it (the owner's HOME, /root).
func (a adapter) launch(l *launch, path, model string) error {
	if err := a.prepare(l, path, model); err != nil {
		return err
	}
	if root := installRoot(path); root != "" {
		l.Expose = append(l.Expose, root)
	}
	return nil
}

// installRoot is the directory that holds a tool's install: the parent of
// the first node_modules in its path, else its directory; never a home
// directory itself, /root, /home or /.
func installRoot(path string) string {
	root := filepath.Dir(path)
	if i := strings.Index(path, "/node_modules/"); i > 0 {
		root = path[:i]
	}
	home, _ := os.UserHomeDir()
	switch filepath.Clean(root) {
	case "/", "/root", "/home", filepath.Clean(home):
		return ""
	}
	return root
}

// toolPath finds an adapter's executable: its path variable, else PATH.
func (a adapter) toolPath(getenv func(string) string) (string, error) {
	p := getenv(a.pathEnv)
	if p == "" {
		var err error
		if p, err = exec.LookPath(a.bin); err != nil {
			return "", fmt.Errorf("engine %s: %s is not installed (not on PATH, no %s)", a.bin, a.bin, a.pathEnv)
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("engine %s: %w", a.bin, err)
	}
	return filepath.Abs(real)
}

// toolVersion runs `TOOL --version` (with an empty HOME) and checks it.
func (a adapter) toolVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	home, err := os.MkdirTemp("", "aos-tool-version-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("engine %s: %s --version failed: %v", a.bin, path, err)
	}
	v := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(v, '\n'); i >= 0 {
		v = strings.TrimSpace(v[i+1:])
	}
	if !a.versionRe().MatchString(v) {
		return v, &UnsupportedVersionError{Engine: a.bin, Path: path, Found: clip(v, 80), Supported: a.supported}
	}
	return v, nil
}

// ToolStatus says whether an adapter's tool (codex, claude, openclaw) is
// installed and supported: "installed: VERSION (PATH)", or an error that
// names what was found and the versions supported.
func ToolStatus(ctx context.Context, name string, getenv func(string) string) (string, error) {
	a, ok := adapters[name]
	if !ok {
		return "", fmt.Errorf("engine %s has no adapter in this build", name)
	}
	p, err := a.toolPath(getenv)
	if err != nil {
		return "", err
	}
	v, err := a.toolVersion(ctx, p)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("installed: %s (%s)", v, p), nil
}
