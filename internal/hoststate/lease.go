package hoststate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Token is the device singleton's immutable fencing token: which lease
// (Scope), who holds it (Owner), this holding's unguessable id (Token) and
// what it guards (Subject). A renewal or release proves all four.
type Token struct {
	Scope   string `json:"scope"`
	Owner   string `json:"owner"`
	Token   string `json:"token"`
	Subject string `json:"subject"`
}

// Lease is the device singleton record in the host state.
type Lease struct {
	Token
	PID       int    `json:"pid"`
	Boot      string `json:"boot"` // the kernel's boot id when claimed
	URL       string `json:"url,omitempty"`
	ClaimedAt int64  `json:"claimedAt"` // Unix ms
	ExpiresAt int64  `json:"expiresAt"` // Unix ms
}

// State is the host state file's document.
type State struct {
	Device *Lease `json:"device,omitempty"`
}

// DeviceScope is the scope of the device singleton lease.
const DeviceScope = "device"

// Claim asks for the device singleton.
type Claim struct {
	Owner    string        // a label: "aos up"
	Subject  string        // what is guarded: the data dir's identity
	PID      int           // the claiming process
	URL      string        // where it serves, shown to a refused second owner
	Duration time.Duration // the lease's length
	Now      time.Time
	// Gone reports whether a prior holder is provably gone (nil:
	// OwnerGone). aos up, which holds the data dir's flock, passes a func
	// returning true: the kernel dropped the previous holder's flock.
	Gone func(Lease) bool
}

// HeldError is ErrLeaseHeld with the live holder.
type HeldError struct{ Holder Lease }

// Error names the holder's pid and URL.
func (e *HeldError) Error() string {
	return fmt.Sprintf("hoststate: device singleton held by pid %d (%s) until %s", e.Holder.PID, e.Holder.URL,
		time.UnixMilli(e.Holder.ExpiresAt).UTC().Format(time.RFC3339))
}

// Is matches ErrLeaseHeld.
func (e *HeldError) Is(target error) bool { return target == ErrLeaseHeld }

// BootID is this boot's kernel id ("" where unknown).
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// OwnerGone reports whether l's process is provably gone: it was claimed
// in this boot and no process has its pid (or it is a zombie). A pid in
// use by anything is not proof.
func OwnerGone(l Lease) bool {
	if l.Boot == "" || l.Boot != BootID() {
		return false
	}
	if err := syscall.Kill(l.PID, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", l.PID))
	if err != nil {
		return false
	}
	// "pid (comm) S …": the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func decodeState(snap Snapshot) (State, error) {
	var st State
	if snap.State == nil {
		return st, nil
	}
	if err := json.Unmarshal(snap.State, &st); err != nil {
		return st, &Error{Code: CodeMalformed, Msg: "host state document", Err: err}
	}
	return st, nil
}

// ClaimDevice takes the device singleton: when it is free, expired or its
// holder is provably gone. A live unexpired holder is a *HeldError and
// nothing is written.
func ClaimDevice(ctx context.Context, s *Store, c Claim) (Lease, error) {
	gone := c.Gone
	if gone == nil {
		gone = OwnerGone
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return Lease{}, fmt.Errorf("hoststate: fencing token: %w", err)
	}
	l := Lease{Token: Token{Scope: DeviceScope, Owner: c.Owner, Token: hex.EncodeToString(tok[:]), Subject: c.Subject},
		PID: c.PID, Boot: BootID(), URL: c.URL, ClaimedAt: c.Now.UnixMilli(), ExpiresAt: c.Now.Add(c.Duration).UnixMilli()}
	_, err := s.Update(ctx, func(snap Snapshot) (json.RawMessage, error) {
		st, err := decodeState(snap)
		if err != nil {
			return nil, err
		}
		if h := st.Device; h != nil && h.ExpiresAt > c.Now.UnixMilli() && !gone(*h) {
			return nil, &HeldError{Holder: *h}
		}
		st.Device = &l
		return json.Marshal(st)
	})
	if err != nil {
		return Lease{}, fmt.Errorf("claim device singleton: %w", err)
	}
	return l, nil
}

// RenewDevice extends the lease of tok to now+d by CAS; a state whose
// device lease is not exactly tok is ErrLeaseLost and nothing is written.
func RenewDevice(ctx context.Context, s *Store, tok Token, now time.Time, d time.Duration) error {
	_, err := s.Update(ctx, func(snap Snapshot) (json.RawMessage, error) {
		st, err := decodeState(snap)
		if err != nil {
			return nil, err
		}
		if st.Device == nil || st.Device.Token != tok {
			return nil, &Error{Code: CodeLeaseLost, File: s.file(), Msg: "the device lease is no longer this owner's"}
		}
		if st.Device.ExpiresAt <= now.UnixMilli() {
			return nil, &Error{Code: CodeLeaseLost, File: s.file(), Msg: "the device lease expired before its renewal"}
		}
		st.Device.ExpiresAt = now.Add(d).UnixMilli()
		return json.Marshal(st)
	})
	if err != nil {
		return fmt.Errorf("renew device singleton: %w", err)
	}
	return nil
}

// ReleaseDevice frees the lease if it is still exactly tok; a successor's
// lease is never touched.
func ReleaseDevice(ctx context.Context, s *Store, tok Token) error {
	_, err := s.Update(ctx, func(snap Snapshot) (json.RawMessage, error) {
		st, err := decodeState(snap)
		if err != nil {
			return nil, err
		}
		if st.Device == nil || st.Device.Token != tok {
			return nil, nil
		}
		st.Device = nil
		return json.Marshal(st)
	})
	if err != nil {
		return fmt.Errorf("release device singleton: %w", err)
	}
	return nil
}

// Guard returns a context that is cancelled (with the renewal's error as
// its cause) the first time a renewal of tok cannot prove the token still
// matches (the cause is always ErrLeaseLost), and starts the supervisor that renews it every d/3. stop ends
// the supervisor and waits for it.
func Guard(ctx context.Context, s *Store, tok Token, d time.Duration, now func() time.Time) (guarded context.Context, stop func()) {
	gctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d / 3)
		defer t.Stop()
		for {
			select {
			case <-gctx.Done():
				return
			case <-quit:
				return
			case <-t.C:
			}
			if err := RenewDevice(gctx, s, tok, now(), d); err != nil {
				if !errors.Is(err, ErrLeaseLost) {
					err = &Error{Code: CodeLeaseLost, Msg: "a renewal could not prove the fencing token", Err: err}
				}
				cancel(err)
				return
			}
		}
	}()
	return gctx, func() {
		close(quit)
		<-done
		cancel(context.Canceled)
	}
}
