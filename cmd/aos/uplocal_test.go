package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestUpLocalNoLogin is issue 15's "done when": on one machine, with no
// login and no token, `aos mission create --watch` goes through aos up's
// control socket; the watch prints the approval command, `aos approve`
// (also through the socket) resolves it, and the watch follows the
// mission to its end. A second aos up is refused.
func TestUpLocalNoLogin(t *testing.T) {
	bin := buildAOS(t)
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { upLocalNoLogin(t, bin, driver) })
	}
}

func upLocalNoLogin(t *testing.T, bin, driver string) {
	srv := scripttest.Start(t, upFlowScript)
	root := t.TempDir()
	addr := freeAddr(t)
	dataDir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "AOS_DATA_DIR=" + dataDir,
		"AOS_ADDR=" + addr, "AOS_WORKSPACE_ROOT=" + root, "ANTHROPIC_BASE_URL=" + srv.URL(), "AOS_LOG_LEVEL=warn"}
	if driver == "postgres" {
		db := storetest.New(t, "postgres")
		_ = db.Store.Close()
		env = append(env, "AOS_DATABASE_URL="+db.DSN)
	}
	up := start(t, bin, env, "up")
	var seen strings.Builder
	up.expect(t, regexp.MustCompile(`setup token: `), &seen)
	waitHealthy(t, "http://"+addr, &seen)
	if err := demo.WriteRepo(filepath.Join(root, "calc")); err != nil {
		t.Fatal(err)
	}
	// The socket is served once the server child is up.
	sock := filepath.Join(dataDir, "control", "aos.sock")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control socket at %s:\n%s", sock, seen.String())
		}
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir: %v %v", fi, err)
	}
	if r := run(t, bin, env, "mission", "ls"); r.code != 0 || !strings.Contains(r.out, "no missions") {
		t.Fatalf("aos mission ls with no login: %d\n%s", r.code, r.out)
	}
	watch := start(t, bin, env, "mission", "create", "say hello", "--criteria", "it says hello", "--workspace", "calc",
		"--model", "script:upflow", "--network", "open", "--budget-usd", "0.1", "--max-turns", "10", "--watch")
	var timeline strings.Builder
	waitID := watch.expect(t, regexp.MustCompile(`aos approve (\S+)`), &timeline)[1]
	if r := run(t, bin, env, "waits"); r.code != 0 || !strings.Contains(r.out, waitID[:8]) {
		t.Fatalf("aos waits: %d\n%s", r.code, r.out)
	}
	if r := run(t, bin, env, "approve", waitID); r.code != 0 {
		t.Fatalf("aos approve: %d\n%s", r.code, r.out)
	}
	watch.expect(t, regexp.MustCompile(`\[exit code 0\]`), &timeline)
	if code := watch.exit(t); code != 6 {
		t.Fatalf("aos mission create --watch exit = %d, want 6 (partial):\n%s", code, timeline.String())
	}
	r := run(t, bin, env, "mission", "ls")
	if r.code != 0 || !strings.Contains(r.out, "partial") {
		t.Fatalf("aos mission ls: %d\n%s", r.code, r.out)
	}
	id := regexp.MustCompile(`mission (\S+) created`).FindStringSubmatch(timeline.String())
	if id == nil {
		t.Fatalf("no mission id in:\n%s", timeline.String())
	}
	if r := run(t, bin, env, "mission", "show", id[1][:8]); r.code != 0 || !strings.Contains(r.out, "partial") || !strings.Contains(r.out, "no pending waits") {
		t.Fatalf("aos mission show: %d\n%s", r.code, r.out)
	}
	// Watching an ended mission replays its timeline from the journal.
	if r := run(t, bin, env, "mission", "watch", id[1]); r.code != 6 || !strings.Contains(r.out, "[exit code 0]") {
		t.Fatalf("aos mission watch of the ended mission: %d\n%s", r.code, r.out)
	}
	// A second aos up is refused and mints nothing.
	if code, out := runBounded(t, bin, env, "up"); code == 0 || !strings.Contains(out, "already running") || strings.Contains(out, "aos_setup_") {
		t.Fatalf("second aos up: %d\n%s", code, out)
	}
	_ = up.cmd.Process.Signal(os.Interrupt)
	if code := up.exit(t); code != 0 {
		t.Fatalf("aos up exit = %d:\n%s", code, seen.String())
	}
	// A clean stop releases the device lease.
	if b, err := os.ReadFile(filepath.Join(dataDir, "host", "host-state.json")); err != nil || strings.Contains(string(b), `"device":{`) {
		t.Fatalf("host state after a clean stop: %s %v", b, err)
	}
}

// TestUpCorruptHostState: aos up on a data dir whose host state file was
// tampered with reports it and exits non-zero before minting a setup token
// or starting anything; the file is left byte for byte as evidence.
func TestUpCorruptHostState(t *testing.T) {
	bin := buildAOS(t)
	dataDir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + dataDir, "AOS_ADDR=" + freeAddr(t),
		"AOS_WORKSPACE_ROOT=" + t.TempDir(), "AOS_LOG_LEVEL=warn"}
	path := filepath.Join(dataDir, "host", "host-state.json")
	for name, body := range map[string]string{
		"corrupt": `{"schema":1,"revision":3,"state":{"device":null},"sha256":"00"}`,
		"future":  `{"schema":9,"revision":3,"state":{},"sha256":"00"}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := runBounded(t, bin, env, "up")
		if code == 0 || !strings.Contains(out, "host-state.json") || strings.Contains(out, "aos_setup_") || strings.Contains(out, dataDir+"/host") {
			t.Fatalf("%s: aos up exit %d:\n%s", name, code, out)
		}
		if b, _ := os.ReadFile(path); string(b) != body {
			t.Fatalf("%s: the host state file was rewritten: %s", name, b)
		}
	}
}

// TestUpStopsWhenItsLeaseIsLost: when the host state's device lease no
// longer holds aos up's fencing token, its next renewal cannot prove it
// and aos up stops its work: the children stop, the socket goes, and it
// exits non-zero saying why.
func TestUpStopsWhenItsLeaseIsLost(t *testing.T) {
	bin := buildAOS(t)
	dataDir := t.TempDir()
	addr := freeAddr(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + dataDir, "AOS_ADDR=" + addr,
		"AOS_WORKSPACE_ROOT=" + t.TempDir(), "AOS_LOG_LEVEL=warn"}
	up := start(t, bin, env, "up")
	var seen strings.Builder
	up.expect(t, regexp.MustCompile(`setup token: `), &seen)
	waitHealthy(t, "http://"+addr, &seen)
	s, err := hoststate.Open(filepath.Join(dataDir, "host"), "host-state", hoststate.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(t.Context(), func(snap hoststate.Snapshot) (json.RawMessage, error) {
		var st hoststate.State
		if err := json.Unmarshal(snap.State, &st); err != nil || st.Device == nil || st.Device.PID != up.cmd.Process.Pid {
			return nil, fmt.Errorf("no lease of aos up in %s: %v", snap.State, err)
		}
		st.Device.Token.Token = "another-owner"
		return json.Marshal(st)
	})
	if err != nil {
		t.Fatal(err)
	}
	up.expect(t, regexp.MustCompile(`stopped its work: .*lease_lost`), &seen)
	if code := up.exit(t); code == 0 {
		t.Fatalf("aos up exit 0 after losing its lease:\n%s", seen.String())
	}
	if _, err := os.Stat(filepath.Join(dataDir, "control", "aos.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the control socket outlived the lease: %v", err)
	}
}
