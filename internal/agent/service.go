package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
)

// Missions is what the service uses of mission.Service: project
// registration (one path for every front end), mission creation and the
// engine check. *mission.Service implements it.
type Missions interface {
	CreateProject(ctx context.Context, actor mission.Actor, req mission.CreateProjectRequest) (mission.Project, error)
	ListProjects(ctx context.Context) ([]mission.Project, error)
	GetProject(ctx context.Context, id string) (mission.Project, error)
	CreateMission(ctx context.Context, actor mission.Actor, req mission.CreateRequest) (mission.Mission, error)
	ListMissions(ctx context.Context, r mission.ListMissionsRequest) ([]mission.Mission, error)
	CheckEngine(ctx context.Context, engine string) error
}

// Options configure a Service.
type Options struct {
	// Store holds the installed index, the journal, agents and receipts.
	Store store.Store
	// Missions registers projects and creates missions.
	Missions Missions
	// WorkspaceRoot is the mission service's workspace root: new agent
	// workspaces are made directly under it, existing ones must lie in it.
	WorkspaceRoot string
	// DataDir holds the machine id and package trees (packages/).
	DataDir string
	// Getenv reads the owner's environment for the few variables scripts
	// get (PATH, HOME, USER, LOGNAME, TMPDIR); os.Getenv by default.
	Getenv func(string) string
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Logger receives structured logs.
	Logger *slog.Logger
	// SetupTimeout and DoctorTimeout bound the scripts (10 and 2 minutes
	// by default).
	SetupTimeout, DoctorTimeout time.Duration
	// AfterCreate, when set, is called after an agent's creation receipt
	// is committed and before the operation records it. Tests use it to
	// stop there; nil in production.
	AfterCreate func(operationID string)
}

// Service is the Store and agent service. It is safe for concurrent use.
type Service struct {
	opts      Options
	st        store.Store
	ms        Missions
	machineID string
	official  map[string]pkgSource
	jobs      chan struct{} // a slot per active preparation job
	turnMu    sync.Mutex    // serializes SendTurn, so one key creates one mission
	wg        sync.WaitGroup

	mu        sync.Mutex // guards the fields below
	base      context.Context
	installs  map[string]*installJob
	readiness map[string]Readiness
	lastPrep  map[string]LastPreparation
	wsClaims  map[string]string // canonical workspace → operation id
	revoked   map[string]bool
	// engineChecks is when polling last re-checked an operation's engine.
	engineChecks map[string]time.Time
}

type installJob struct {
	done chan struct{}
	err  error
}

// New returns a service. Call Start before Prepare, to recover
// interrupted operations and give jobs their context.
func New(opts Options) (*Service, error) {
	if opts.Store == nil || opts.Missions == nil || opts.WorkspaceRoot == "" || opts.DataDir == "" {
		return nil, errors.New("agent: Store, Missions, WorkspaceRoot and DataDir are required")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SetupTimeout <= 0 {
		opts.SetupTimeout = 10 * time.Minute
	}
	if opts.DoctorTimeout <= 0 {
		opts.DoctorTimeout = 2 * time.Minute
	}
	off, err := officialPackages()
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	id, err := machineID(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &Service{opts: opts, st: opts.Store, ms: opts.Missions, machineID: id, official: off,
		jobs: make(chan struct{}, MaxActiveJobs), base: context.Background(),
		installs: map[string]*installJob{}, readiness: map[string]Readiness{}, lastPrep: map[string]LastPreparation{},
		wsClaims: map[string]string{}, revoked: map[string]bool{}, engineChecks: map[string]time.Time{}}, nil
}

// machineID reads the machine id from dataDir/machine-id, making one the
// first time.
func machineID(dataDir string) (string, error) {
	p := filepath.Join(dataDir, "machine-id")
	if b, err := os.ReadFile(p); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("make data dir: %w", err)
	}
	id := "aos-" + randHex(8)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if b, rerr := os.ReadFile(p); rerr == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b)), nil
		}
		return "", fmt.Errorf("write machine id: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(id + "\n"); err != nil {
		return "", fmt.Errorf("write machine id: %w", err)
	}
	return id, f.Sync()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// MachineID returns this machine's stable id.
func (s *Service) MachineID() string { return s.machineID }

// Start recovers what a previous process left unfinished (see recover)
// and runs later preparation jobs under ctx.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	return s.recover(ctx)
}

// Wait waits for the preparation jobs started so far (after their context
// ends, they stop at their next boundary).
func (s *Service) Wait() { s.wg.Wait() }

// Revoke stops identity's future preparation steps at their next boundary
// with REVOKED, and refuses its new requests. Nothing is deleted.
func (s *Service) Revoke(ctx context.Context, identity string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[identity] = true
	return nil
}

func (s *Service) isRevoked(identity string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revoked[identity]
}

func (s *Service) now() int64 { return s.opts.Now().UnixMilli() }

// storageErr wraps a store failure as STORAGE_FAILED without its text.
func storageErr(doing string, err error) error {
	return &Error{Code: CodeStorageFailed, Message: "cannot " + doing + " in the database", Guidance: "inspect aos's data; retry with the same key only", Err: err}
}
