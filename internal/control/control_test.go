package control_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/control"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/testbin"
)

// argsSHA is the record's hash of an operation's arguments, as the client
// sends them.
func argsSHA(op string, args any) string {
	b, _ := json.Marshal(args)
	sum := sha256.Sum256(append([]byte(op+"\x00"), b...))
	return hex.EncodeToString(sum[:])
}

func TestSocketModes(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	path := control.SocketPath(f.dataDir)
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v", fi.Mode(), err)
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir: %v %v", di.Mode(), err)
	}
	var p control.ProcessStatus
	if err := f.client.Call(context.Background(), control.OpProcessStatus, "", nil, &p); err != nil || p.PID != os.Getpid() || p.DaemonID != f.srv.DaemonID() {
		t.Fatalf("process.status: %+v %v", p, err)
	}
}

// asNobody runs this test binary as uid/gid 65534 in the peer role
// against socket and returns what it printed.
func asNobody(t *testing.T, socket string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a peer as another user")
	}
	dir, err := os.MkdirTemp("", "aos-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "peer.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	testbin.WriteExecutable(t, bin, self) // no ETXTBSY for runuser's exec of it
	cmd := exec.Command("runuser", "-u", "nobody", "--", bin, "-test.run=^$")
	cmd.Env = []string{"AOS_TEST_CHILD=peer", "AOS_TEST_SOCKET=" + socket, "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("peer child: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	return string(out)
}

// TestOtherUserRefused: a peer of another uid cannot reach the socket
// through its 0700 directory; and where the directory lets it connect,
// SO_PEERCRED refuses it with permission_denied before any dispatch: no
// mission, no command record.
func TestOtherUserRefused(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	if out := asNobody(t, control.SocketPath(f.dataDir)); !strings.Contains(out, "permission denied") {
		t.Fatalf("through the 0700 dir: %s", out)
	}
	// Open the directory and socket to everyone: only the peer check is left.
	path := control.SocketPath(f.dataDir)
	for _, p := range []string{filepath.Dir(f.dataDir), f.dataDir, filepath.Dir(path), path} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	out := asNobody(t, path)
	env, perr := control.DecodeEnvelope([]byte(out))
	var e control.Error
	if perr != nil || env.Kind != control.KindError || json.Unmarshal(env.Payload, &e) != nil || e.Code != control.CodePermissionDenied {
		t.Fatalf("another uid's request got %s", out)
	}
	if ms := f.missions(t); len(ms) != 0 {
		t.Fatalf("a refused peer created %d missions", len(ms))
	}
	if rev := f.commandsRevision(t); rev != 0 {
		t.Fatalf("a refused peer wrote the command records (revision %d)", rev)
	}
	// The owner's own request on the same socket goes through.
	if err := f.client.Call(context.Background(), control.OpMissionCreate, "cmd-owner", mission.CreateRequest{Objective: "x", Workspace: "plain", Model: "claude-opus-5-5"}, nil); err != nil {
		t.Fatalf("the owner: %v", err)
	}
}

// TestIdempotency: a repeated command_id returns the original result and
// mutates nothing, also after a restart of the daemon; another operation
// or other arguments under it is command_id_conflict; a refused command
// leaves no record.
func TestIdempotency(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	req := mission.CreateRequest{Objective: "x", Workspace: "plain", Model: "claude-opus-5-5"}
	var first mission.Mission
	r1, err := f.client.CallResponse(ctx, control.OpMissionCreate, "cmd-1", req, &first)
	if err != nil || r1.Replayed || r1.CommandID != "cmd-1" {
		t.Fatalf("create: %+v %v", r1, err)
	}
	var again mission.Mission
	r2, err := f.client.CallResponse(ctx, control.OpMissionCreate, "cmd-1", req, &again)
	if err != nil || !r2.Replayed || again.ID != first.ID {
		t.Fatalf("repeat: %+v %v (first %s, again %s)", r2, err, first.ID, again.ID)
	}
	other := req
	other.Objective = "y"
	if err := f.client.Call(ctx, control.OpMissionCreate, "cmd-1", other, nil); !errors.Is(err, &control.Error{Code: control.CodeCommandIDConflict}) {
		t.Fatalf("other args: %v", err)
	}
	if err := f.client.Call(ctx, control.OpMissionCancel, "cmd-1", control.MissionArgs{MissionID: first.ID}, nil); !errors.Is(err, &control.Error{Code: control.CodeCommandIDConflict}) {
		t.Fatalf("other operation: %v", err)
	}
	if ms := f.missions(t); len(ms) != 1 || ms[0].Status != "queued" {
		t.Fatalf("missions after repeats: %+v", ms)
	}
	// A restarted daemon (new identity) keeps the record.
	f.start(t, 0)
	r3, err := f.client.CallResponse(ctx, control.OpMissionCreate, "cmd-1", req, &again)
	if err != nil || !r3.Replayed || again.ID != first.ID || len(f.missions(t)) != 1 {
		t.Fatalf("repeat after restart: %+v %v", r3, err)
	}
	// Refused by the service: no record, so the id is still free.
	bad := mission.CreateRequest{Objective: "x", Workspace: "../outside", Model: "claude-opus-5-5"}
	if err := f.client.Call(ctx, control.OpMissionCreate, "cmd-2", bad, nil); !errors.Is(err, &control.Error{Code: control.CodeInvalidArgument}) {
		t.Fatalf("refused create: %v", err)
	}
	if err := f.client.Call(ctx, control.OpMissionCreate, "cmd-2", req, nil); err != nil {
		t.Fatalf("the id of a refused command is reusable: %v", err)
	}
	// Cancel twice: one cancellation; invalid_state for a wait not pending.
	if err := f.client.Call(ctx, control.OpMissionCancel, "cmd-3", control.MissionArgs{MissionID: first.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := f.client.CallResponse(ctx, control.OpMissionCancel, "cmd-3", control.MissionArgs{MissionID: first.ID}, nil); err != nil || !r.Replayed {
		t.Fatalf("repeat cancel: %+v %v", r, err)
	}
	// Records left pending by a daemon killed between the call and its
	// result. A mission creation is keyed by its command_id (the mission's
	// id derives from it, in the kernel's one transaction), so a repeat
	// settles it: killed after the mission was made, the repeat returns
	// that mission; killed before, it makes exactly one.
	pending := func(id, op string, args any) {
		t.Helper()
		if _, err := f.cmds.Update(ctx, func(snap hoststate.Snapshot) (json.RawMessage, error) {
			var st map[string]any
			if err := json.Unmarshal(snap.State, &st); err != nil {
				return nil, err
			}
			st["commands"].(map[string]any)[id] = map[string]any{"operation": op, "argsSha256": argsSHA(op, args), "status": "pending", "at": 1}
			return json.Marshal(st)
		}); err != nil {
			t.Fatal(err)
		}
	}
	made, _, err := f.svc.CreateMissionOnce(ctx, "crashed-daemon", "control:cmd-4", req) // what the killed daemon did
	if err != nil {
		t.Fatal(err)
	}
	pending("cmd-4", control.OpMissionCreate, req)
	before := len(f.missions(t))
	var settled mission.Mission
	if err := f.client.Call(ctx, control.OpMissionCreate, "cmd-4", req, &settled); err != nil || settled.ID != made.ID {
		t.Fatalf("repeat of a pending create whose mission exists: %v, got %s want %s", err, settled.ID, made.ID)
	}
	if len(f.missions(t)) != before {
		t.Fatal("a repeat of a pending command created a second mission")
	}
	pending("cmd-5", control.OpMissionCreate, req)
	if err := f.client.Call(ctx, control.OpMissionCreate, "cmd-5", req, &settled); err != nil || len(f.missions(t)) != before+1 {
		t.Fatalf("repeat of a pending create whose mission was never made: %v, %d missions, want %d", err, len(f.missions(t)), before+1)
	}
	if r, err := f.client.CallResponse(ctx, control.OpMissionCreate, "cmd-5", req, nil); err != nil || !r.Replayed || len(f.missions(t)) != before+1 {
		t.Fatalf("the settled record replays: %+v %v", r, err)
	}
	// Other mutations are not keyed: a pending one's outcome is unknown,
	// so a repeat is invalid_state and calls nothing.
	pending("cmd-6", control.OpMissionCancel, control.MissionArgs{MissionID: made.ID})
	if err := f.client.Call(ctx, control.OpMissionCancel, "cmd-6", control.MissionArgs{MissionID: made.ID}, nil); !errors.Is(err, &control.Error{Code: control.CodeInvalidState}) {
		t.Fatalf("repeat of a pending cancel: %v", err)
	}
	if m, err := f.svc.GetMission(ctx, made.ID); err != nil || m.Status != "queued" {
		t.Fatalf("a repeat of a pending cancel cancelled: %+v %v", m, err)
	}
	// No command_id on a mutation: refused, nothing created.
	n := len(f.missions(t))
	if err := f.client.Call(ctx, control.OpMissionCreate, "", req, nil); !errors.Is(err, &control.Error{Code: control.CodeMalformedFrame}) {
		t.Fatalf("mutation without command_id: %v", err)
	}
	if len(f.missions(t)) != n {
		t.Fatal("a mutation without command_id created a mission")
	}
}

// TestRejectedFrames: each bad frame gets its code and mutates nothing.
func TestRejectedFrames(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	path := control.SocketPath(f.dataDir)
	good := createFrame("m1", "cmd-x", "plain")
	withPayload := func(p string) []byte {
		e := good
		e.Payload = json.RawMessage(p)
		return mustJSON(t, e)
	}
	env := func(mut func(*control.Envelope)) []byte {
		e := good
		mut(&e)
		return mustJSON(t, e)
	}
	big := make([]byte, 4)
	big[0] = 0x7f // a length of ~2 GiB
	cases := []struct {
		name string
		raw  []byte
		code string
	}{
		{"not json", frame([]byte("{nope")), control.CodeMalformedFrame},
		{"no version", frame([]byte(`{"kind":"request","message_id":"m","operation":"mission.create"}`)), control.CodeMalformedFrame},
		{"future version", frame(env(func(e *control.Envelope) { e.ProtocolVersion = 2 })), control.CodeUnsupportedVersion},
		{"unknown envelope field", frame(bytes.Replace(mustJSON(t, good), []byte(`{"protocol_version"`), []byte(`{"priority":1,"protocol_version"`), 1)), control.CodeMalformedFrame},
		{"kind response", frame(env(func(e *control.Envelope) { e.Kind = control.KindResponse })), control.CodeMalformedFrame},
		{"kind unknown", frame(env(func(e *control.Envelope) { e.Kind = "command" })), control.CodeMalformedFrame},
		{"no message id", frame(env(func(e *control.Envelope) { e.MessageID = "" })), control.CodeMalformedFrame},
		{"unknown operation", frame(env(func(e *control.Envelope) { e.Operation = "mission.delete" })), control.CodeUnsupportedOperation},
		{"overlay.status not built", frame(env(func(e *control.Envelope) { e.Operation = "overlay.status" })), control.CodeUnsupportedOperation},
		{"unknown payload field", frame(withPayload(`{"command_id":"cmd-x","args":{"objective":"x","workspace":"plain","model":"m"},"force":true}`)), control.CodeMalformedFrame},
		{"unknown argument", frame(withPayload(`{"command_id":"cmd-x","args":{"objective":"x","workspace":"plain","model":"m","sudo":true}}`)), control.CodeMalformedFrame},
		{"cursor on a mutation", frame(withPayload(`{"command_id":"cmd-x","args":{"objective":"x","workspace":"plain","model":"m"},"cursor":{"daemon_id":"d","event_sequence":1,"journal_event_id":0}}`)), control.CodeMalformedFrame},
		{"bad command id", frame(withPayload(`{"command_id":"a b\n","args":{"objective":"x","workspace":"plain","model":"m"}}`)), control.CodeMalformedFrame},
		{"trailing data", frame(append(mustJSON(t, good), []byte(` {}`)...)), control.CodeMalformedFrame},
		{"oversized", append(big, []byte("{}")...), control.CodeMalformedFrame},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, e := rawExchange(t, path, tc.raw)
			if env.Kind != control.KindError || e.Code != tc.code {
				t.Fatalf("got %s %+v, want error %s", env.Kind, e, tc.code)
			}
			if strings.Contains(e.Message, f.dataDir) || len(e.Message) > 400 {
				t.Fatalf("unsafe message: %q", e.Message)
			}
		})
	}
	if ms := f.missions(t); len(ms) != 0 {
		t.Fatalf("rejected frames created %d missions", len(ms))
	}
	if rev := f.commandsRevision(t); rev != 0 {
		t.Fatalf("rejected frames wrote command records (revision %d)", rev)
	}
	// The same frame, well-formed, does mutate: the cases were refused for
	// what they were, not for the request itself.
	if _, e := rawExchange(t, path, frame(mustJSON(t, good))); e.Code != "" {
		t.Fatalf("the good frame: %+v", e)
	}
	if len(f.missions(t)) != 1 {
		t.Fatal("the good frame created no mission")
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"protocol_version":1,"kind":"request","message_id":"m","operation":"runtime.status","payload":{}}`))
	f.Add([]byte(`{"protocol_version":2}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := control.DecodeEnvelope(b)
		if err == nil && (env.ProtocolVersion != control.ProtocolVersion || env.MessageID == "") {
			t.Fatalf("accepted %q as %+v", b, env)
		}
	})
}

// TestListenLeavesTheUmaskAlone: creating the control socket does not
// change the process's umask, which every other goroutine's new files
// take (a temporary umask of 0177 made a parallel test's 0755 executable
// 0600, and runuser could not run it: "Permission denied").
func TestListenLeavesTheUmaskAlone(t *testing.T) {
	dir := t.TempDir()
	f, err := os.OpenFile(filepath.Join(dir, "before"), os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	before, err := f.Stat()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := before.Mode().Perm() // 0755 under the process's umask
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := filepath.Join(dir, fmt.Sprintf("f%d", i%8))
			_ = os.Remove(p)
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				done <- err
				return
			}
			fi, err := f.Stat()
			f.Close()
			if err == nil && fi.Mode().Perm() != want {
				done <- fmt.Errorf("a file created while the socket was made has mode %v, want %v", fi.Mode().Perm(), want)
				return
			}
		}
	}()
	for i := 0; i < 2000; i++ {
		ln, err := control.Listen(filepath.Join(t.TempDir(), "data"))
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
