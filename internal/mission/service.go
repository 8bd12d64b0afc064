package mission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/aos-run/aos/internal/hostconfig"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
)

// Options configure a Service.
type Options struct {
	// WorkspaceRoot confines every mission's workspace. Required.
	WorkspaceRoot string
	// Version is reported by Status.
	Version string
	// DataDir is the server's data dir, reported by Status.
	DataDir string
	// Getenv reads the environment the CLI passes down (nil: empty): provider key
	// presence for Status, and keys and base URLs for the model adapters
	// that list models. A key is never returned, logged or stored.
	Getenv func(string) string
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Logger receives structured logs; never a secret.
	Logger *slog.Logger
	// GitEnv is added to the environment of every git command the service
	// runs (project init, inspection and clone); tests use it to trust a
	// test server's certificate with GIT_SSL_CAINFO. gitx accepts only a CA
	// (GIT_SSL_CAINFO, GIT_SSL_CAPATH) and identity variables here. TLS
	// verification is never turned off by the service itself.
	GitEnv []string
	// AllowPrivateClones lets projects be cloned from this machine or a
	// non-public network (AOS_CLONE_ALLOW_PRIVATE=1); refused by default.
	AllowPrivateClones bool
	// LookupHost resolves a clone URL's host (net.DefaultResolver by
	// default); tests point a name at their own server with it.
	LookupHost func(ctx context.Context, host string) ([]netip.Addr, error)
	// CloneTimeout bounds a project clone; 10 minutes by default.
	CloneTimeout time.Duration
	// Adapter builds the adapter of a model, for the model check at
	// mission creation; nil uses the provider registry's, configured from
	// Getenv (a local model's from its endpoint settings). aos demo passes
	// its scripted model server's.
	Adapter AdapterFunc
	// ModelCheckTimeout bounds the model check at mission creation
	// (DefaultModelCheckTimeout by default). A local endpoint that accepts
	// the probe but does not answer in time is given the benefit of the
	// doubt.
	ModelCheckTimeout time.Duration
	// HostConfig gives each project's configuration files (.aos/config.yaml
	// and the user-local file), latest valid revision; nil reads none.
	HostConfig *hostconfig.Registry
}

// Service is the mission service over one kernel. It is safe for concurrent
// use.
type Service struct {
	k      *kernel.Kernel
	st     store.Store
	opts   Options
	models modelCache
}

// New returns a service over k.
func New(k *kernel.Kernel, opts Options) *Service {
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CloneTimeout <= 0 {
		opts.CloneTimeout = DefaultCloneTimeout
	}
	if opts.ModelCheckTimeout <= 0 {
		opts.ModelCheckTimeout = DefaultModelCheckTimeout
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	return &Service{k: k, st: k.Store(), opts: opts}
}

// Version returns the version the service reports.
func (s *Service) Version() string { return s.opts.Version }

func (s *Service) now() time.Time { return s.opts.Now() }

// Actor names who performs a mutation, for the audit log: "token:<id>" for
// an API token, "cli:<user>" for a local administrator.
type Actor string

// audit records a mutation that succeeded. A failure to record is logged and
// does not undo the mutation, which has committed already.
func (s *Service) audit(ctx context.Context, actor Actor, action, target string, detail map[string]any) {
	_, err := s.st.InsertAudit(context.WithoutCancel(ctx), s.auditRecord(actor, action, target, detail))
	if err != nil {
		s.opts.Logger.Error("audit record lost", "action", action, "target", target, "err", err.Error())
	}
}

// auditRecord is the audit record of an action, at the service's now.
func (s *Service) auditRecord(actor Actor, action, target string, detail map[string]any) store.AuditRecord {
	b := []byte("{}")
	if detail != nil {
		if j, err := json.Marshal(detail); err == nil {
			b = j
		}
	}
	return store.AuditRecord{At: s.now().UnixMilli(), Actor: string(actor), Action: action, Target: target, Detail: b}
}

// AuditEntry is one audit record as presented.
type AuditEntry struct {
	ID     int64           `json:"id"`
	At     int64           `json:"at"`
	Actor  string          `json:"actor"`
	Action string          `json:"action"`
	Target string          `json:"target"`
	Detail json.RawMessage `json:"detail"`
}

// ListAudit returns audit records older than before (newest first; all when
// before is 0), at most limit (1..1000, default 100).
func (s *Service) ListAudit(ctx context.Context, before int64, limit int) ([]AuditEntry, error) {
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 || before < 0 {
		return nil, invalid("limit must be 1..1000 and before ≥ 0")
	}
	rs, err := s.st.ListAudit(ctx, store.ListAuditParams{Before: before, Limit: limit})
	if err != nil {
		return nil, translate("list audit", err)
	}
	out := make([]AuditEntry, 0, len(rs))
	for _, r := range rs {
		out = append(out, AuditEntry{ID: r.ID, At: r.At, Actor: r.Actor, Action: r.Action, Target: r.Target, Detail: r.Detail})
	}
	return out, nil
}

// setting reads a JSON setting into v; it reports false when it is absent.
func (s *Service) setting(ctx context.Context, key string, v any) (bool, error) {
	raw, err := s.st.GetSetting(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mission: read setting %s: %w", key, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("mission: setting %s is not valid: %w", key, err)
	}
	return true, nil
}
