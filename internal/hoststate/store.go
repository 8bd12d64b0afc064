package hoststate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// SchemaVersion is the envelope schema this build reads and writes.
const SchemaVersion = 1

// Code classifies host state errors; Error.Is matches on it.
type Code string

// Error codes.
const (
	// CodeCorrupt: the checksum does not match the schema/revision/state.
	CodeCorrupt Code = "corrupt"
	// CodeMalformed: the file is not one well-formed envelope.
	CodeMalformed Code = "malformed"
	// CodeUnsupportedSchema: the envelope's schema is not SchemaVersion.
	CodeUnsupportedSchema Code = "unsupported_schema"
	// CodeRevisionConflict: a CAS named a revision that is not current.
	CodeRevisionConflict Code = "revision_conflict"
	// CodeLeaseHeld: a live owner holds the device singleton.
	CodeLeaseHeld Code = "lease_held"
	// CodeLeaseLost: the fencing token no longer matches the state.
	CodeLeaseLost Code = "lease_lost"
)

// Error is the package's typed failure. File is the state file's base
// name (never a full path).
type Error struct {
	Code Code
	File string
	Msg  string
	Err  error
}

// Error returns "hoststate: <file>: <code>: <message>".
func (e *Error) Error() string {
	s := "hoststate: "
	if e.File != "" {
		s += e.File + ": "
	}
	s += string(e.Code)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches a sentinel *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.Msg == "" && t.Err == nil && t.File == ""
}

// Sentinels for errors.Is.
var (
	ErrCorrupt           = &Error{Code: CodeCorrupt}
	ErrMalformed         = &Error{Code: CodeMalformed}
	ErrUnsupportedSchema = &Error{Code: CodeUnsupportedSchema}
	ErrRevisionConflict  = &Error{Code: CodeRevisionConflict}
	ErrLeaseHeld         = &Error{Code: CodeLeaseHeld}
	ErrLeaseLost         = &Error{Code: CodeLeaseLost}
)

// envelope is the file's JSON document.
type envelope struct {
	Schema   int             `json:"schema"`
	Revision uint64          `json:"revision"`
	State    json.RawMessage `json:"state"`
	SHA256   string          `json:"sha256"`
}

// checksum is the SHA-256 over "schema\nrevision\n" and the compact state.
func checksum(schema int, rev uint64, state []byte) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(schema) + "\n" + strconv.FormatUint(rev, 10) + "\n"))
	h.Write(state)
	return hex.EncodeToString(h.Sum(nil))
}

// Snapshot is a state as read: Revision 0 and a nil State when the file
// does not exist yet.
type Snapshot struct {
	Revision uint64
	State    json.RawMessage
}

// Hooks are test kill points, nil in production.
type Hooks struct {
	// AfterTempWrite runs once the temp file is written and synced, before
	// the rename.
	AfterTempWrite func()
}

// Store is one state file in a directory. Several Stores, in one process
// or many, may share a file: every read-modify-write holds the file's
// advisory lock.
type Store struct {
	dir   string
	name  string
	hooks Hooks
}

// Open returns the store of dir/name.json, creating dir (0700) if needed.
func Open(dir, name string, hooks Hooks) (*Store, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("hoststate: bad state name %q", name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("hoststate: create state dir: %w", err)
	}
	return &Store{dir: dir, name: name, hooks: hooks}, nil
}

func (s *Store) file() string     { return s.name + ".json" }
func (s *Store) path() string     { return filepath.Join(s.dir, s.file()) }
func (s *Store) lockPath() string { return filepath.Join(s.dir, s.name+".lock") }

// lock takes the advisory lock shared by every instance of this file; the
// returned func releases it.
func (s *Store) lock(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hoststate: open lock of %s: %w", s.file(), err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("hoststate: lock %s: %w", s.file(), err)
	}
	return func() { _ = f.Close() }, nil // closing drops the flock
}

// Load reads the current state under the lock.
func (s *Store) Load(ctx context.Context) (Snapshot, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()
	return s.read()
}

// read parses the file; the caller holds the lock.
func (s *Store) read() (Snapshot, error) {
	b, err := os.ReadFile(s.path())
	if errors.Is(err, os.ErrNotExist) {
		return Snapshot{}, nil
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("hoststate: read %s: %w", s.file(), err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var env envelope
	if err := dec.Decode(&env); err != nil {
		return Snapshot{}, &Error{Code: CodeMalformed, File: s.file(), Msg: "not a JSON envelope", Err: err}
	}
	if dec.More() {
		return Snapshot{}, &Error{Code: CodeMalformed, File: s.file(), Msg: "trailing data after the envelope"}
	}
	if env.Schema != SchemaVersion {
		return Snapshot{}, &Error{Code: CodeUnsupportedSchema, File: s.file(), Msg: fmt.Sprintf("schema %d, this aos reads %d", env.Schema, SchemaVersion)}
	}
	if env.Revision == 0 || len(env.State) == 0 || env.SHA256 == "" {
		return Snapshot{}, &Error{Code: CodeMalformed, File: s.file(), Msg: "missing revision, state or sha256"}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, env.State); err != nil {
		return Snapshot{}, &Error{Code: CodeMalformed, File: s.file(), Msg: "state is not JSON", Err: err}
	}
	if checksum(env.Schema, env.Revision, compact.Bytes()) != env.SHA256 {
		return Snapshot{}, &Error{Code: CodeCorrupt, File: s.file(), Msg: fmt.Sprintf("checksum mismatch at revision %d", env.Revision)}
	}
	return Snapshot{Revision: env.Revision, State: compact.Bytes()}, nil
}

// CompareAndSwap writes state as revision expect+1 if the current revision
// is expect, and returns the new revision. A stale expect is
// ErrRevisionConflict; an unreadable current file is its typed error, and
// the file is left as it is.
func (s *Store) CompareAndSwap(ctx context.Context, expect uint64, state json.RawMessage) (uint64, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	cur, err := s.read()
	if err != nil {
		return 0, err
	}
	if cur.Revision != expect {
		return 0, &Error{Code: CodeRevisionConflict, File: s.file(), Msg: fmt.Sprintf("expected revision %d, current is %d", expect, cur.Revision)}
	}
	return s.write(expect+1, state)
}

// Update reads the state, calls fn with it and writes what fn returns as
// the next revision, all under the lock. fn returning a nil state writes
// nothing; an error from fn is returned as it is.
func (s *Store) Update(ctx context.Context, fn func(Snapshot) (json.RawMessage, error)) (uint64, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	cur, err := s.read()
	if err != nil {
		return 0, err
	}
	next, err := fn(cur)
	if err != nil || next == nil {
		return cur.Revision, err
	}
	return s.write(cur.Revision+1, next)
}

// write replaces the file with revision rev of state: a same-directory
// temp file, fsync, atomic rename, directory fsync. The caller holds the
// lock and has read a valid (or absent) current file.
func (s *Store) write(rev uint64, state json.RawMessage) (uint64, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, state); err != nil {
		return 0, fmt.Errorf("hoststate: state for %s is not JSON: %w", s.file(), err)
	}
	b, err := json.Marshal(envelope{Schema: SchemaVersion, Revision: rev, State: compact.Bytes(), SHA256: checksum(SchemaVersion, rev, compact.Bytes())})
	if err != nil {
		return 0, fmt.Errorf("hoststate: encode %s: %w", s.file(), err)
	}
	s.removeTemps()
	tmp, err := os.CreateTemp(s.dir, "."+s.name+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("hoststate: temp file for %s: %w", s.file(), err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("hoststate: write %s: %w", s.file(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("hoststate: sync %s: %w", s.file(), err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("hoststate: close %s: %w", s.file(), err)
	}
	if s.hooks.AfterTempWrite != nil {
		s.hooks.AfterTempWrite()
	}
	if err := os.Rename(tmp.Name(), s.path()); err != nil {
		return 0, fmt.Errorf("hoststate: rename %s: %w", s.file(), err)
	}
	done = true
	d, err := os.Open(s.dir)
	if err != nil {
		return 0, fmt.Errorf("hoststate: open state dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return 0, fmt.Errorf("hoststate: sync state dir: %w", err)
	}
	return rev, nil
}

// removeTemps deletes temp files a crashed writer left (the caller holds
// the lock, so none is being written).
func (s *Store) removeTemps() {
	ms, _ := filepath.Glob(filepath.Join(s.dir, "."+s.name+".tmp-*"))
	for _, m := range ms {
		_ = os.Remove(m)
	}
}
