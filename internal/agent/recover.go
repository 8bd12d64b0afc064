package agent

import (
	"context"
	"errors"

	"github.com/aos-run/aos/internal/store"
)

// recover answers what a previous process left unfinished, replaying
// nothing:
//   - an operation with a creation receipt (its agent row) recovers its
//     agent id even if the operation's last update was lost; the agent is
//     rechecked against the registry and launched (checked), never
//     created again;
//   - any other interrupted operation becomes needs_user_action with
//     RECOVERY_REQUIRED: no install, setup, folder creation or launch is
//     repeated;
//   - an installation left "installing" becomes broken (never retried).
func (s *Service) recover(ctx context.Context) error {
	rows, err := s.st.ListAgentPackages(ctx)
	if err != nil {
		return storageErr("list the package index", err)
	}
	for _, r := range rows {
		if r.State == InstallInstalling {
			r.State, r.Broken, r.UpdatedAt = InstallBroken, "installation interrupted by a restart of aos (setup may have partly run)", s.now()
			if err := s.st.UpsertAgentPackage(ctx, r); err != nil {
				return storageErr("mark an interrupted installation", err)
			}
		}
	}
	ops, err := s.st.ListAgentOperationsInState(ctx, []string{StateAccepted, StateRunning})
	if err != nil {
		return storageErr("list interrupted operations", err)
	}
	for _, op := range ops {
		a, err := s.st.GetAgentByOperation(ctx, op.ID)
		switch {
		case err == nil:
			op.AgentID, op.Workspace = a.ID, a.Workspace
			if err := s.recheck(ctx, a.ID, op.ID); err != nil {
				s.finish(ctx, &op, err)
				continue
			}
			r := &opRun{s: s, op: op}
			r.op.State, r.op.Phase, r.op.UpdatedAt = StateRunning, PhaseLaunch, s.now()
			_ = s.save(ctx, r.op)
			if err := s.launch(ctx, r); err != nil {
				s.finish(ctx, &r.op, err)
			}
		case errors.Is(err, store.ErrNotFound):
			s.finish(ctx, &op, &Error{Code: CodeRecoveryRequired,
				Message:  "aos restarted during the " + op.Phase + " phase, before the agent's creation was confirmed; nothing was replayed",
				Guidance: "inspect the machine first (aos package ls, the workspace root); a new key starts a deliberately new preparation"})
		default:
			return storageErr("read a creation receipt", err)
		}
	}
	return nil
}
