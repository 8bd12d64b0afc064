package agent

import (
	"context"
	"errors"

	"github.com/aos-run/aos/internal/store"
)

// recover answers what a dead runner (an earlier process, or another
// server on the same database) left unfinished, replaying nothing. It runs
// at start and then every Lease/3, and takes only operations whose lease
// ended, each by an atomic claim, so two servers never both take one and
// a live server's operations are never touched:
//   - an operation with a creation receipt (its agent row) recovers its
//     agent id even if the operation's last update was lost; the agent is
//     rechecked against the registry and launched (checked), never
//     created again;
//   - any other interrupted operation becomes needs_user_action with
//     RECOVERY_REQUIRED: no install, setup, folder creation or launch is
//     repeated;
//   - an installation left "installing" becomes broken (never retried),
//     once no operation holds a live lease.
func (s *Service) recover(ctx context.Context) error {
	// The installed index is read before the operations: an install that
	// is "installing" here was started by an operation that already
	// existed, so if that operation still holds a live lease below, the
	// install is left alone.
	rows, err := s.st.ListAgentPackages(ctx)
	if err != nil {
		return storageErr("list the package index", err)
	}
	ops, err := s.st.ListAgentOperationsInState(ctx, []string{StateAccepted, StateRunning})
	if err != nil {
		return storageErr("list interrupted operations", err)
	}
	now := s.now()
	live := false
	for _, op := range ops {
		if op.Owner == s.runner || op.LeaseUntil >= now {
			live = true
			continue
		}
		if err := s.st.ClaimAgentOperation(ctx, op.ID, s.runner, now, s.leaseUntil()); err != nil {
			if errors.Is(err, store.ErrConflict) {
				continue // another server claimed it first, or it ended
			}
			return storageErr("claim an interrupted operation", err)
		}
		op.Owner = s.runner
		if err := s.recoverOne(ctx, op); err != nil {
			return err
		}
	}
	if live {
		return nil
	}
	for _, r := range rows {
		if r.State != InstallInstalling {
			continue
		}
		s.mu.Lock()
		_, mine := s.installs[r.PackageID]
		s.mu.Unlock()
		if mine {
			continue
		}
		err := s.st.MarkAgentPackageBroken(ctx, r.PackageID, r.UpdatedAt, "installation interrupted by a restart of aos (setup may have partly run)", s.now())
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return storageErr("mark an interrupted installation", err)
		}
	}
	return nil
}

// recoverOne answers one claimed operation.
func (s *Service) recoverOne(ctx context.Context, op store.AgentOperation) error {
	a, err := s.st.GetAgentByOperation(ctx, op.ID)
	switch {
	case err == nil:
		op.AgentID, op.Workspace = a.ID, a.Workspace
		if err := s.recheckRecord(ctx, a); err != nil {
			s.finish(ctx, &op, err)
			return nil
		}
		r := &opRun{s: s, op: op}
		r.op.State, r.op.Phase, r.op.UpdatedAt = StateRunning, PhaseLaunch, s.now()
		_ = s.save(ctx, r.op)
		if err := s.launch(ctx, r); err != nil {
			s.finish(ctx, &r.op, err)
		}
	case errors.Is(err, store.ErrNotFound):
		s.finish(ctx, &op, &Error{Code: CodeRecoveryRequired,
			Message:  "the aos server running it stopped during the " + op.Phase + " phase, before the agent's creation was confirmed; nothing was replayed",
			Guidance: "inspect the machine first (aos package ls, the workspace root); a new key starts a deliberately new preparation"})
	default:
		return storageErr("read a creation receipt", err)
	}
	return nil
}
