package control_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/clients"
	"github.com/aos-run/aos/internal/control"
)

// clientChild is a small client program: it says ready and appends each
// line the daemon sends to $AOS_TEST_LOG with its kind and pid.
func clientChild() {
	kind := os.Args[len(os.Args)-1]
	log, err := os.OpenFile(os.Getenv("AOS_TEST_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(9)
	}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Fprintf(log, "%s %d %s\n", kind, os.Getpid(), sc.Text())
	}
	os.Exit(0)
}

// TestClientOperations: client.start|focus|detail|stop through the socket
// with command_id idempotency; a start converges on the live process; the
// viewer's detail is routed by the daemon to the console it starts; a
// refused operation (an unknown kind, an undeclared route) leaves no
// record; process.status lists the clients.
func TestClientOperations(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "clients.log")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m, err := clients.New([]clients.Spec{
		{Kind: "viewer", Argv: []string{self, "-test.run=^$", "viewer"}, DetailTo: []string{"console"}},
		{Kind: "console", Argv: []string{self, "-test.run=^$", "console"}},
	}, clients.Options{Env: []string{"AOS_TEST_CHILD=client", "AOS_TEST_LOG=" + logPath}, StopGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	f := setup(t, 0, func(f *fixture) { f.clients = m })
	ctx := context.Background()
	var st clients.Status
	if err := f.client.Call(ctx, control.OpClientStart, "c1", control.ClientArgs{Kind: "viewer"}, &st); err != nil || st.PID == 0 {
		t.Fatalf("client.start: %+v %v", st, err)
	}
	pid := st.PID
	var again clients.Status
	if r, err := f.client.CallResponse(ctx, control.OpClientStart, "c1", control.ClientArgs{Kind: "viewer"}, &again); err != nil || !r.Replayed || again.PID != pid {
		t.Fatalf("repeat: %+v %v", r, err)
	}
	if err := f.client.Call(ctx, control.OpClientStart, "c2", control.ClientArgs{Kind: "viewer"}, &again); err != nil || again.PID != pid {
		t.Fatalf("a second start made another process: %+v %v", again, err)
	}
	var detail clients.Status
	if err := f.client.Call(ctx, control.OpClientDetail, "c3", control.ClientDetailArgs{From: "viewer", To: "console", Detail: json.RawMessage(`{"mission":"m1"}`)}, &detail); err != nil || detail.Kind != "console" || detail.State != clients.StateConnected {
		t.Fatalf("client.detail: %+v %v", detail, err)
	}
	// The console process logs the detail when it reads it: poll its log
	// with a deadline (the answer comes when the detail was handed over,
	// not when the child wrote it down).
	want := fmt.Sprintf(`console %d detail {"mission":"m1"}`, detail.PID)
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ = os.ReadFile(logPath)
		if strings.Contains(string(b), want) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(string(b), want) {
		t.Errorf("the console did not get the detail (%q):\n%s", want, b)
	}
	before := f.commandsRevision(t)
	if err := f.client.Call(ctx, control.OpClientFocus, "c4", control.ClientArgs{Kind: "nope"}, nil); !errors.Is(err, &control.Error{Code: control.CodeNotFound}) {
		t.Errorf("unknown kind: %v", err)
	}
	if err := f.client.Call(ctx, control.OpClientDetail, "c5", control.ClientDetailArgs{From: "console", To: "viewer", Detail: json.RawMessage(`{}`)}, nil); !errors.Is(err, &control.Error{Code: control.CodePermissionDenied}) {
		t.Errorf("undeclared route: %v", err)
	}
	if f.commandsRevision(t) != before+4 { // each admitted, then removed as refused
		t.Errorf("commands revision %d, want %d", f.commandsRevision(t), before+4)
	}
	if err := f.client.Call(ctx, control.OpClientFocus, "c4", control.ClientArgs{Kind: "viewer"}, nil); err != nil {
		t.Errorf("a refused command's id is free again: %v", err)
	}
	if err := f.client.Call(ctx, control.OpClientStop, "c6", control.ClientArgs{Kind: "viewer"}, &st); err != nil || st.State != clients.StateStopped {
		t.Fatalf("client.stop: %+v %v", st, err)
	}
	var ps control.ProcessStatus
	if err := f.client.Call(ctx, control.OpProcessStatus, "", control.NoArgs{}, &ps); err != nil || len(ps.Clients) != 2 ||
		ps.Clients[0].Kind != "console" || ps.Clients[0].State != clients.StateConnected || ps.Clients[1].State != clients.StateStopped {
		t.Fatalf("process.status: %+v %v", ps.Clients, err)
	}
}
