package control_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/clients"
	"github.com/aos-run/aos/internal/control"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestMain(m *testing.M) {
	if os.Getenv("AOS_TEST_CHILD") == "peer" {
		peerChild()
		return
	}
	if os.Getenv("AOS_TEST_CHILD") == "client" {
		clientChild()
		return
	}
	goleak.VerifyTestMain(m)
}

// peerChild dials AOS_TEST_SOCKET, sends one mission.create and prints
// the reply's body (or the dial error) on stdout.
func peerChild() {
	c, err := net.Dial("unix", os.Getenv("AOS_TEST_SOCKET"))
	if err != nil {
		os.Stdout.WriteString("dial: " + err.Error())
		os.Exit(0)
	}
	defer c.Close()
	_ = control.WriteFrame(c, createFrame("m1", "cmd-peer", "plain"))
	b, err := control.ReadFrame(c)
	if err != nil {
		os.Stdout.WriteString("read: " + err.Error())
		os.Exit(0)
	}
	os.Stdout.Write(b)
	os.Exit(0)
}

func createFrame(msgID, cmdID, workspace string) control.Envelope {
	args, _ := json.Marshal(mission.CreateRequest{Objective: "x", Workspace: workspace, Model: "claude-opus-5-5"})
	p, _ := json.Marshal(control.Request{CommandID: cmdID, Args: args})
	return control.Envelope{ProtocolVersion: 1, Kind: control.KindRequest, MessageID: msgID, Operation: control.OpMissionCreate, Payload: p}
}

// fixture is a control server on a real SQLite mission service.
type fixture struct {
	svc     *mission.Service
	cmds    *hoststate.Store
	ints    *hoststate.Store
	clients *clients.Manager
	dataDir string
	srv     *control.Server
	client  *control.Client
	stop    func()
}

func setup(t *testing.T, retain int, mods ...func(*fixture)) *fixture {
	t.Helper()
	db := storetest.New(t, "sqlite")
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	k := kernel.New(db.Store, kernel.Options{EventPoll: 5 * time.Millisecond})
	f := &fixture{svc: mission.New(k, mission.Options{WorkspaceRoot: root}), dataDir: t.TempDir()}
	var err error
	if f.cmds, err = hoststate.Open(filepath.Join(f.dataDir, "host"), "control-commands", hoststate.Hooks{}); err != nil {
		t.Fatal(err)
	}
	if f.ints, err = hoststate.Open(filepath.Join(f.dataDir, "host"), "integrations", hoststate.Hooks{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		m(f)
	}
	f.start(t, retain)
	return f
}

// start (re)starts the server: a new daemon identity on the same data.
func (f *fixture) start(t *testing.T, retain int) {
	t.Helper()
	if f.stop != nil {
		f.stop()
	}
	srv, err := control.New(control.Options{Service: f.svc, Commands: f.cmds, Integrations: f.ints, Clients: f.clients, Retain: retain})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := control.Listen(f.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	f.srv, f.client = srv, control.NewClient(control.SocketPath(f.dataDir))
	stopped := false
	f.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	t.Cleanup(f.stop)
}

func (f *fixture) missions(t *testing.T) []mission.Mission {
	t.Helper()
	ms, err := f.svc.ListMissions(context.Background(), mission.ListMissionsRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func (f *fixture) commandsRevision(t *testing.T) uint64 {
	t.Helper()
	s, err := f.cmds.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Revision
}

// rawExchange writes raw bytes on a fresh connection and reads one reply.
func rawExchange(t *testing.T, path string, raw []byte) (control.Envelope, control.Error) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
	b, err := control.ReadFrame(c)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	env, perr := control.DecodeEnvelope(b)
	if perr != nil {
		t.Fatalf("bad reply %s: %v", b, perr)
	}
	var e control.Error
	if env.Kind == control.KindError {
		if err := json.Unmarshal(env.Payload, &e); err != nil {
			t.Fatal(err)
		}
	}
	return env, e
}

func frame(body []byte) []byte {
	out := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	return append(out, body...)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
