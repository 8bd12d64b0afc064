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
// registration (one path for every front end), mission creation and
// status, the engine check and the clone rule. *mission.Service implements it.
type Missions interface {
	CreateProject(ctx context.Context, actor mission.Actor, req mission.CreateProjectRequest) (mission.Project, error)
	ListProjects(ctx context.Context) ([]mission.Project, error)
	GetProject(ctx context.Context, id string) (mission.Project, error)
	CreateMission(ctx context.Context, actor mission.Actor, req mission.CreateRequest) (mission.Mission, error)
	// CreateMissionOnce is CreateMission under an idempotency key: a
	// repeat returns the mission the first call made.
	CreateMissionOnce(ctx context.Context, actor mission.Actor, key string, req mission.CreateRequest) (mission.Mission, bool, error)
	ListMissions(ctx context.Context, r mission.ListMissionsRequest) ([]mission.Mission, error)
	GetMission(ctx context.Context, id string) (mission.Mission, error)
	CheckEngine(ctx context.Context, engine string) error
	// CloneArgs is the mission service's one rule for git URLs (form, and
	// no private or loopback address), with the git options that pin the
	// clone to the addresses it checked.
	CloneArgs(ctx context.Context, url string) ([]string, error)
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
	// get (PATH, HOME, USER, LOGNAME, TMPDIR); nil is an empty environment
	// (the CLI's root passes the process's: the environment is read at the edge).
	Getenv func(string) string
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Logger receives structured logs.
	Logger *slog.Logger
	// SetupTimeout and DoctorTimeout bound the scripts (10 and 2 minutes
	// by default).
	SetupTimeout, DoctorTimeout time.Duration
	// GitEnv is added to the environment of the git clone of a community
	// package (gitx accepts only a CA and identity variables); tests trust
	// their server's certificate with GIT_SSL_CAINFO.
	GitEnv []string
	// Lease is how long an operation stays this process's without a
	// renewal (15 s by default): the process renews the leases of its
	// operations every Lease/3, and every Lease/3 it recovers operations
	// whose lease ended (a server that died), so another server on the
	// same database finishes them within about 1.3 × Lease.
	Lease time.Duration
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
	runner    string // this process's runner id: the owner of its operations
	official  map[string]pkgSource
	jobs      chan struct{}  // a slot per active preparation job
	wg        sync.WaitGroup // preparation jobs
	beatWG    sync.WaitGroup // the lease loop

	mu        sync.Mutex // guards the fields below
	base      context.Context
	installs  map[string]*installJob
	readiness map[string]Readiness
	lastPrep  map[string]LastPreparation
	wsClaims  map[string]string // canonical workspace → operation id
	revoked   map[string]bool   // a cache of the store's revocations (they are never undone)
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
		opts.Getenv = func(string) string { return "" }
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
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	off, err := officialPackages()
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	id, err := machineID(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &Service{opts: opts, st: opts.Store, ms: opts.Missions, machineID: id, runner: id + "/" + randHex(6), official: off,
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

// DefaultLease is how long an operation's owner holds it without renewing.
const DefaultLease = 15 * time.Second

// Start recovers what a dead process left unfinished (see recover), runs
// later preparation jobs under ctx and, until ctx ends, renews this
// process's operation leases and recovers other runners' expired ones.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	if err := s.recover(ctx); err != nil {
		return err
	}
	s.beatWG.Add(1)
	go func() {
		defer s.beatWG.Done()
		s.beat(ctx)
	}()
	return nil
}

// beat renews this runner's leases (one statement) and recovers expired
// operations every Lease/3 until ctx ends; then it drains.
func (s *Service) beat(ctx context.Context) {
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.drain(ctx, t)
			return
		case <-t.C:
		}
		if _, err := s.st.RenewAgentOperationLeases(ctx, s.runner, s.leaseUntil()); err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn("agent: renew operation leases", "err", err.Error())
		}
		if err := s.recover(ctx); err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn("agent: recover expired operations", "err", err.Error())
		}
	}
}

// drain keeps this runner's leases while its jobs stop at their next
// boundary (each holds a job slot until it returns), so that no other
// server takes an operation in the middle of a step, and then releases
// them, so that recovery (another server's, or this machine's next start)
// need not wait for them to expire.
func (s *Service) drain(ctx context.Context, t *time.Ticker) {
	bg := context.WithoutCancel(ctx)
	for len(s.jobs) > 0 {
		<-t.C
		if _, err := s.st.RenewAgentOperationLeases(bg, s.runner, s.leaseUntil()); err != nil {
			s.opts.Logger.Warn("agent: renew operation leases", "err", err.Error())
		}
	}
	rctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	if err := s.st.ReleaseAgentOperationLeases(rctx, s.runner); err != nil {
		s.opts.Logger.Warn("agent: release operation leases", "err", err.Error())
	}
}

func (s *Service) leaseUntil() int64 { return s.opts.Now().Add(s.opts.Lease).UnixMilli() }

// Wait waits for the preparation jobs started so far (after their context
// ends, they stop at their next boundary) and, once Start's context has
// ended, for the lease loop's last release.
func (s *Service) Wait() {
	s.wg.Wait()
	s.mu.Lock()
	ended := s.base.Err() != nil
	s.mu.Unlock()
	if ended {
		s.beatWG.Wait()
	}
}

// Revoke stops identity's future preparation and turn steps at their next
// boundary with REVOKED, on every server using this database, and refuses
// its new requests. It is durable; nothing is deleted.
func (s *Service) Revoke(ctx context.Context, identity string) error {
	if err := s.st.RevokeAgentIdentity(ctx, identity, s.now()); err != nil {
		return storageErr("record the revocation", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[identity] = true
	return nil
}

// checkRevoked answers REVOKED (with msg) if identity was revoked. It
// consults the store at each boundary (boundaries are not hot), so a
// revocation made through another server, or before a restart, holds; a
// revocation seen once is cached, since it is never undone. A store
// failure is STORAGE_FAILED: the work stops rather than going on unchecked.
func (s *Service) checkRevoked(ctx context.Context, identity, msg string) error {
	s.mu.Lock()
	r := s.revoked[identity]
	s.mu.Unlock()
	if !r {
		var err error
		if r, err = s.st.AgentIdentityRevoked(context.WithoutCancel(ctx), identity); err != nil {
			return storageErr("read the identity's revocation", err)
		}
		if r {
			s.mu.Lock()
			s.revoked[identity] = true
			s.mu.Unlock()
		}
	}
	if r {
		return &Error{Code: CodeRevoked, Message: msg}
	}
	return nil
}

// revokedCached reports a revocation this process has seen.
func (s *Service) revokedCached(identity string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revoked[identity]
}

func (s *Service) now() int64 { return s.opts.Now().UnixMilli() }

// storageErr wraps a store failure as STORAGE_FAILED without its text.
func storageErr(doing string, err error) error {
	return &Error{Code: CodeStorageFailed, Message: "cannot " + doing + " in the database", Guidance: "inspect aos's data; retry with the same key only", Err: err}
}
