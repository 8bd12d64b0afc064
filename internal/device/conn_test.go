package device

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store"
)

// stubOps answers every operation at once; the channel's behaviour over
// the real agent service is tested in internal/api and e2e.
type stubOps struct{}

func (stubOps) MachineID() string { return "m" }
func (stubOps) StoreList(context.Context, string, agent.StoreListRequest) (agent.StoreListResult, error) {
	return agent.StoreListResult{MachineID: "m"}, nil
}
func (stubOps) StoreInspect(context.Context, string, string) (agent.StoreInspectResult, error) {
	return agent.StoreInspectResult{MachineID: "m", Candidates: make([]agent.Agent, 7)}, nil
}
func (stubOps) Prepare(context.Context, string, agent.PrepareRequest) (agent.PrepareResult, error) {
	return agent.PrepareResult{Status: agent.StatusAccepted}, nil
}
func (stubOps) Operation(context.Context, string, string) (agent.Operation, error) {
	return agent.Operation{}, &agent.Error{Code: agent.CodeOperationNotFound, Message: "no such operation"}
}
func (stubOps) SendTurn(context.Context, string, agent.TurnSendRequest) (agent.Receipt, error) {
	return agent.Receipt{}, nil
}
func (stubOps) Receipt(context.Context, string, string) (agent.Receipt, error) {
	return agent.Receipt{}, nil
}
func (stubOps) Revoke(context.Context, string) error { return nil }

// testConn is a conn whose frames go to a slice.
func testConn(t testing.TB) (*conn, func() [][]byte) {
	s := New(nil, Options{Ops: stubOps{}, Limits: Limits{Rate: 1e9, Burst: 1 << 30, MaxInFlight: 1 << 20}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	var out [][]byte
	c := &conn{s: s, dev: store.Device{ID: "dev_1"}, ctx: ctx, cancel: cancel, life: ctx, slots: make(chan struct{}, 1<<20), ids: recentIDs{n: 64}}
	c.writeHook = func(b []byte) { mu.Lock(); out = append(out, b); mu.Unlock() }
	return c, func() [][]byte { c.wg.Wait(); mu.Lock(); defer mu.Unlock(); return out }
}

// FuzzFrame: any frame, before or after hello, gets exactly one answer: a
// JSON object whose type is "error" or ends in "_result", whose requestId
// (when not null) is the one sent, and which has either an error with a
// code or a result. Nothing panics.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","requestId":"11111111-1111-4111-8111-111111111111","proto":1,"capabilities":["store.list","store.inspect","agent.prepare","operation.get","turn.send","receipt.get"]}`,
		`{"type":"store.list","requestId":"22222222-2222-4222-8222-222222222222","query":"Go","offset":0,"limit":5}`,
		`{"type":"store.inspect","requestId":"33333333-3333-4333-8333-333333333333","packageId":"aos/go-service"}`,
		`{"type":"agent.prepare","requestId":"44444444-4444-4444-8444-444444444444","machineId":"m","packageId":"p","idempotencyKey":"k","workspace":{"kind":"new"}}`,
		`{"type":"operation.get","requestId":"55555555-5555-4555-8555-555555555555","operationId":"x"}`,
		`{"type":"turn.send","requestId":"66666666-6666-4666-8666-666666666666","machineId":"m","agentId":"a","idempotencyKey":"t","text":"hi"}`,
		`{"type":"receipt.get","requestId":"77777777-7777-4777-8777-777777777777","receiptId":"r"}`,
		`{"type":"x","requestId":null}`, `[]`, `null`, `{"type":"store.list","requestId":"` + strings.Repeat("a", 100) + `"}`, "\xff",
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, frame []byte, hello bool) {
		c, frames := testConn(t)
		if hello {
			c.handle([]byte(`{"type":"hello","requestId":"99999999-9999-4999-8999-999999999999","proto":1,"capabilities":["store.list","store.inspect","agent.prepare","operation.get","turn.send","receipt.get"]}`))
		}
		before := len(frames())
		c.handle(frame)
		out := frames()
		if len(out) != before+1 {
			t.Fatalf("%d answers to %q, want 1", len(out)-before, frame)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out[len(out)-1], &m); err != nil {
			t.Fatalf("answer %s: %v", out[len(out)-1], err)
		}
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		if typ != "error" && !strings.HasSuffix(typ, "_result") {
			t.Fatalf("answer type %q", typ)
		}
		var sent, got map[string]any
		if json.Unmarshal(frame, &sent) == nil && string(m["requestId"]) != "null" {
			_ = json.Unmarshal(out[len(out)-1], &got)
			if got["requestId"] != sent["requestId"] {
				t.Fatalf("answer echoes %v, sent %v", got["requestId"], sent["requestId"])
			}
		}
		if _, isErr := m["error"]; isErr {
			var e FrameError
			if json.Unmarshal(m["error"], &e) != nil || e.Code == "" || e.Message == "" {
				t.Fatalf("error %s", m["error"])
			}
		}
	})
}

func TestIsUUIDv4(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"33333333-3333-4333-8333-333333333333": true, "33333333-3333-4333-B333-333333333333": true,
		"33333333-3333-1333-8333-333333333333": false, "33333333-3333-4333-7333-333333333333": false,
		"333333333333-4333-8333-333333333333x": false, "33333333-3333-4333-8333-33333333333g": false, "": false,
	} {
		if isUUIDv4(s) != want {
			t.Errorf("isUUIDv4(%q) = %v", s, !want)
		}
	}
}

func TestNormalizeCode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"abcd-efgh-jkmn": "ABCDEFGHJKMN", "O1IL 2345 6789": "011123456789", "ABCD-EFGH-JKM": "", "ABCD-EFGH-JKMU": "", "ABCDEFGHJKMNP": ""} {
		got, ok := normalizeCode(in)
		if ok != (want != "") || ok && got != want {
			t.Errorf("normalizeCode(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

// TestRecentIDs: a remembered id is refused; the oldest is forgotten past
// the bound.
func TestRecentIDs(t *testing.T) {
	t.Parallel()
	r := recentIDs{n: 2}
	if !r.add("a") || !r.add("b") || r.add("a") || r.add("b") {
		t.Fatal("a remembered id was accepted")
	}
	if !r.add("c") || !r.add("a") || r.add("c") {
		t.Fatal("eviction of the oldest id")
	}
}

// TestBucket: Burst frames pass at once, then one per 1/Rate.
func TestBucket(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	s := New(nil, Options{Now: func() time.Time { return now }, Limits: Limits{Rate: 2, Burst: 3}})
	for i := range 3 {
		if !s.allow("d") {
			t.Fatalf("frame %d refused within the burst", i)
		}
	}
	if s.allow("d") {
		t.Fatal("a frame past the burst passed")
	}
	if !s.allow("e") {
		t.Fatal("another device shares the bucket")
	}
	now = now.Add(500 * time.Millisecond)
	if !s.allow("d") || s.allow("d") {
		t.Fatal("refill at Rate")
	}
	now = now.Add(time.Hour)
	for range 3 {
		if !s.allow("d") {
			t.Fatal("refill up to Burst")
		}
	}
	if s.allow("d") {
		t.Fatal("refill beyond Burst")
	}
}

// TestInspectCapsCandidates: at most five candidates reach the device,
// with candidatesTruncated.
func TestInspectCapsCandidates(t *testing.T) {
	t.Parallel()
	c, frames := testConn(t)
	c.handle([]byte(`{"type":"hello","requestId":"99999999-9999-4999-8999-999999999999","proto":1,"capabilities":["store.inspect"]}`))
	c.handle([]byte(`{"type":"store.inspect","requestId":"33333333-3333-4333-8333-333333333333","packageId":"p"}`))
	out := frames()
	var r StoreInspectResult
	if err := json.Unmarshal(out[len(out)-1], &r); err != nil || len(r.Candidates) != agent.MaxCandidates || !r.CandidatesTruncated {
		t.Fatalf("inspect = %s", out[len(out)-1])
	}
}

// TestAnswerComesAfterItsSlotIsFree: BACKPRESSURE tells a device to wait
// for a result, so a device that sends its next request the moment it
// reads an answer must never get it. With one slot, each answer (a result
// or an error) brings the next request before its write returns to the
// server: all 50 requests get their own answer.
func TestAnswerComesAfterItsSlotIsFree(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, frame, code string }{
		{"result", `{"type":"store.list","requestId":"%s","query":"Go"}`, ""},
		{"error", `{"type":"operation.get","requestId":"%s","operationId":"x"}`, agent.CodeOperationNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conn, _ := testConn(t)
			conn.slots = make(chan struct{}, 1)
			conn.handle([]byte(`{"type":"hello","requestId":"99999999-9999-4999-8999-999999999999","proto":1,"capabilities":["store.list","operation.get"]}`))
			const n = 50
			id := func(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", i) }
			var mu sync.Mutex
			var answers [][]byte
			conn.writeHook = func(b []byte) {
				mu.Lock()
				answers = append(answers, b)
				next := len(answers)
				mu.Unlock()
				if next < n {
					conn.handle(fmt.Appendf(nil, c.frame, id(next)))
				}
			}
			conn.handle(fmt.Appendf(nil, c.frame, id(0)))
			conn.wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if len(answers) != n {
				t.Fatalf("%d answers to %d requests", len(answers), n)
			}
			for i, a := range answers {
				var m struct {
					RequestID string
					Error     struct{ Code string }
				}
				if err := json.Unmarshal(a, &m); err != nil || m.RequestID != id(i) || m.Error.Code != c.code {
					t.Fatalf("answer %d: %s (%v), want request %s answered with code %q", i, a, err, id(i), c.code)
				}
			}
		})
	}
}
