package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// fingerprint hashes a preparation's parameters; the request id is not
// among them.
func fingerprint(r PrepareRequest) string {
	b, _ := json.Marshal(struct {
		M, P string
		W    Workspace
	}{r.MachineID, r.PackageID, r.Workspace})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// checkPrepare validates a request before anything is reserved.
func (s *Service) checkPrepare(r *PrepareRequest) error {
	if r.MachineID != s.machineID {
		return &Error{Code: CodeMachineMismatch, Message: "machineId does not name this machine (" + s.machineID + ")", Guidance: "send the request to the machine it names"}
	}
	if !keyRe().MatchString(r.IdempotencyKey) {
		return errf(CodeInvalidRequest, "idempotencyKey must be 1-64 ASCII letters, digits, _ or -")
	}
	if !packageIDRe().MatchString(r.PackageID) {
		return errf(CodeInvalidRequest, "packageId must look like owner/name")
	}
	w := r.Workspace
	switch w.Kind {
	case WorkspaceNew:
		if w.Path != "" {
			return errf(CodeInvalidRequest, `workspace {kind:"new"} takes a name, not a path`)
		}
		if w.Name != "" && !wsNameRe().MatchString(w.Name) {
			return errf(CodeInvalidWorkspace, "a new workspace's name is 1-100 ASCII letters, digits, _ or -, beginning with a letter or digit")
		}
	case WorkspaceExisting:
		if w.Name != "" {
			return errf(CodeInvalidRequest, `workspace {kind:"existing"} takes a path, not a name`)
		}
		if w.Path == "" || len(w.Path) > MaxWorkspacePath || hasControl(w.Path) || !filepath.IsAbs(w.Path) {
			return errf(CodeInvalidWorkspace, "an existing workspace's path is absolute, at most 4096 characters, without control characters")
		}
	default:
		return errf(CodeInvalidRequest, `workspace must be {"kind":"new","name"?} or {"kind":"existing","path"}`)
	}
	return nil
}

// Prepare reserves a preparation operation durably and starts it in the
// background; the answer comes right after the reservation. The same
// identity and key with the same parameters answer "duplicate" with the
// same operation; other parameters are IDEMPOTENCY_CONFLICT. Errors before
// the reservation carry no operation.
func (s *Service) Prepare(ctx context.Context, identity string, r PrepareRequest) (PrepareResult, error) {
	if err := s.checkRevoked(ctx, identity, "this identity's preparation authorization has ended"); err != nil {
		return PrepareResult{}, err
	}
	if err := s.checkPrepare(&r); err != nil {
		return PrepareResult{}, err
	}
	fp := fingerprint(r)
	if res, done, err := s.existing(ctx, identity, r.IdempotencyKey, fp); done {
		return res, err
	}
	p, ok, err := s.lookup(ctx, r.PackageID)
	if err != nil {
		return PrepareResult{}, err
	}
	switch {
	case !ok:
		return PrepareResult{}, &Error{Code: CodePackageNotFound, Message: "no package " + r.PackageID + " on this machine", Guidance: "refresh the catalog (store.list) and choose an actual package"}
	case p.src.m.Viewer:
		return PrepareResult{}, errf(CodeInvalidRequest, r.PackageID+" is a viewer package: a dependency, not an agent")
	case p.state() == InstallBroken:
		return PrepareResult{}, &Error{Code: CodePackageBroken, Message: "the installation of " + r.PackageID + " is broken", Guidance: "repair it on this machine; aos never overwrites a broken install"}
	case p.state() != InstallInstalled && !p.allowed():
		return PrepareResult{}, &Error{Code: CodePackageReviewRequired, Message: r.PackageID + " is a community package the owner has not reviewed", Guidance: "the owner reviews it first: aos package review " + r.PackageID}
	}
	if r.Workspace.Kind == WorkspaceExisting {
		dir, err := s.canonicalExisting(r.Workspace.Path)
		if err != nil {
			return PrepareResult{}, err
		}
		if err := s.workspaceFree(ctx, dir, ""); err != nil {
			return PrepareResult{}, err
		}
	}
	req, _ := json.Marshal(r)
	now := s.now()
	op := store.AgentOperation{ID: randHex(32), Identity: identity, IdemKey: r.IdempotencyKey, Fingerprint: fp, PackageID: r.PackageID,
		Request: req, State: StateAccepted, Phase: PhaseAccepted, Doctor: []byte("[]"), CreatedAt: now, UpdatedAt: now,
		Owner: s.runner, LeaseUntil: s.leaseUntil()}
	if err := s.st.InsertAgentOperation(ctx, op); err != nil {
		if errors.Is(err, store.ErrConflict) {
			if res, done, err := s.existing(ctx, identity, r.IdempotencyKey, fp); done {
				return res, err
			}
		}
		return PrepareResult{}, storageErr("reserve the operation", err)
	}
	s.noteLast(op)
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.run(base, op, r)
	}()
	return PrepareResult{Status: StatusAccepted, Operation: s.opView(op)}, nil
}

// existing answers a key seen before: duplicate or IDEMPOTENCY_CONFLICT.
func (s *Service) existing(ctx context.Context, identity, key, fp string) (PrepareResult, bool, error) {
	op, err := s.st.GetAgentOperationByKey(ctx, identity, key)
	if errors.Is(err, store.ErrNotFound) {
		return PrepareResult{}, false, nil
	}
	if err != nil {
		return PrepareResult{}, true, storageErr("read the operation", err)
	}
	if op.Fingerprint != fp {
		return PrepareResult{}, true, &Error{Code: CodeIdempotencyConflict, Message: "idempotencyKey " + key + " was used with other parameters",
			Guidance: "reconcile your state: poll operation " + op.ID + ", or use a new key for a deliberately new preparation"}
	}
	return PrepareResult{Status: StatusDuplicate, Operation: s.opView(op)}, true, nil
}

// Operation returns identity's operation; another identity's or an unknown
// id is OPERATION_NOT_FOUND. Polling re-checks what can change on its own:
// an agent whose workspace vanished needs action again, and an operation
// waiting for its engine becomes ready once the engine is usable.
func (s *Service) Operation(ctx context.Context, identity, operationID string) (Operation, error) {
	op, err := s.st.GetAgentOperation(ctx, operationID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && op.Identity != identity) {
		return Operation{}, &Error{Code: CodeOperationNotFound, Message: "no operation " + operationID + " for this identity",
			Guidance: "check the id and identity; never assume the work did not run"}
	}
	if err != nil {
		return Operation{}, storageErr("read the operation", err)
	}
	switch {
	case op.State == StateReady && op.AgentID != "":
		if err := s.recheck(ctx, op.AgentID, op.ID); err != nil {
			s.finish(ctx, &op, err)
		}
	case op.State == StateNeedsUserAction && op.ErrorCode == CodeEngineActionRequired && op.AgentID != "" && s.recheckDue(op.ID):
		if s.recheck(ctx, op.AgentID, op.ID) == nil && s.launchCheck(ctx, op.AgentID) == nil {
			op.State, op.Phase, op.ErrorCode, op.ErrorMessage, op.Guidance, op.UpdatedAt = StateReady, PhaseComplete, "", "", "", s.now()
			s.save(ctx, op)
			s.mu.Lock()
			delete(s.engineChecks, op.ID) // ready: polling no longer re-checks it
			s.mu.Unlock()
		}
	}
	return s.opView(op), nil
}

// engineRecheckEvery bounds how often polling re-checks an operation's
// engine (a model check may be a request to the provider).
const engineRecheckEvery = 5 * time.Second

// recheckDue reports whether operation id's engine may be checked again
// now, and if so records that it is.
func (s *Service) recheckDue(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	if last, ok := s.engineChecks[id]; ok && now.Sub(last) < engineRecheckEvery {
		return false
	}
	s.engineChecks[id] = now
	return true
}

func (s *Service) opView(op store.AgentOperation) Operation {
	o := Operation{OperationID: op.ID, MachineID: s.machineID, PackageID: op.PackageID, State: op.State, Phase: op.Phase,
		CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt, Doctor: []string{}, EngineAuthentication: "unknown"}
	if op.AgentID != "" {
		a := op.AgentID
		o.AgentID = &a
	}
	if op.Workspace != "" {
		w := op.Workspace
		o.Workspace = &w
	}
	if op.ErrorCode != "" {
		o.Error = &OpError{Code: op.ErrorCode, Message: op.ErrorMessage}
	}
	if op.Guidance != "" {
		g := op.Guidance
		o.Guidance = &g
	}
	_ = json.Unmarshal(op.Doctor, &o.Doctor)
	if o.Doctor == nil {
		o.Doctor = []string{}
	}
	return o
}

func (s *Service) noteLast(op store.AgentOperation) {
	lp := LastPreparation{State: op.State, Phase: op.Phase, UpdatedAt: op.UpdatedAt}
	if op.ErrorCode != "" {
		lp.Error = &OpError{Code: op.ErrorCode, Message: op.ErrorMessage}
	}
	s.mu.Lock()
	s.lastPrep[op.PackageID] = lp
	s.mu.Unlock()
}

// save persists an operation's progress; a failure is logged (the next
// poll shows the last state that was saved).
func (s *Service) save(ctx context.Context, op store.AgentOperation) error {
	s.noteLast(op)
	if err := s.st.UpdateAgentOperation(context.WithoutCancel(ctx), op); err != nil {
		s.opts.Logger.Error("agent: save operation", "operation", op.ID, "err", err.Error())
		return storageErr("save the operation", err)
	}
	return nil
}

// failedStates are the codes that end an operation as a definite failure;
// every other error needs the user's action.
var failedStates = map[string]bool{CodePackageNotFound: true, CodeInvalidWorkspace: true, CodeWorkspaceInUse: true,
	CodeInvalidRequest: true, CodeProjectExists: true}

// finish records err on op: failed or needs_user_action, with guidance.
func (s *Service) finish(ctx context.Context, op *store.AgentOperation, err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Code: CodeInternal, Message: "preparation stopped without a confirmed result", Guidance: "poll again or retry with the same key", Err: err}
		if errors.Is(err, context.Canceled) {
			e = &Error{Code: CodePreparationUnconfirmed, Message: "aos stopped while preparing", Guidance: "inspect the machine before any new attempt"}
		}
		s.opts.Logger.Error("agent: preparation failed", "operation", op.ID, "err", err.Error())
	}
	op.State = StateNeedsUserAction
	if failedStates[e.Code] {
		op.State = StateFailed
	}
	op.ErrorCode, op.ErrorMessage, op.Guidance, op.UpdatedAt = e.Code, e.Message, e.Guidance, s.now()
	if op.Guidance == "" {
		op.Guidance = defaultGuidance(e.Code)
	}
	_ = s.save(ctx, *op)
}

func defaultGuidance(code string) string {
	switch code {
	case CodeWorkspaceInUse, CodeInvalidWorkspace:
		return "choose another workspace, or use the agent that has this one"
	case CodeDoctorFailed, CodeDependencyNotReady, CodeSetupFailed, CodePackageBroken:
		return "read the doctor lines and repair the tools on this machine, then prepare again"
	case CodeEngineActionRequired:
		return "make the agent's engine usable on this machine (aos models, aos engine check), then poll again"
	case CodeRevoked:
		return "this device's pairing was revoked; inspect any workspace or agent already created"
	}
	return "inspect the machine before any new attempt"
}

// opRun is one running preparation.
type opRun struct {
	s  *Service
	op store.AgentOperation
}

// step is a boundary: it stops a revoked identity's work or a cancelled
// job, and otherwise records the phase.
func (r *opRun) step(ctx context.Context, phase string) error {
	if err := r.s.checkRevoked(ctx, r.op.Identity, "preparation authorization ended before the "+phase+" phase"); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.op.State, r.op.Phase, r.op.UpdatedAt = StateRunning, phase, r.s.now()
	return r.s.save(ctx, r.op)
}

func (r *opRun) setDoctor(lines []string) {
	if len(lines) > MaxDoctorLines {
		lines = lines[len(lines)-MaxDoctorLines:]
	}
	b, _ := json.Marshal(lines)
	if lines == nil {
		b = []byte("[]")
	}
	r.op.Doctor = b
}

// run is a preparation job: it waits for one of the MaxActiveJobs slots,
// then installs, checks, makes the workspace, creates and launches.
func (s *Service) run(ctx context.Context, op store.AgentOperation, req PrepareRequest) {
	select {
	case s.jobs <- struct{}{}:
		defer func() { <-s.jobs }()
	case <-ctx.Done():
		return // accepted and untouched: recovery answers it at the next start
	}
	r := &opRun{s: s, op: op}
	if err := s.prepare(ctx, r, req); err != nil {
		if ctx.Err() != nil && !s.revokedCached(op.Identity) {
			return // the process is stopping: recovery answers it at the next start
		}
		s.finish(ctx, &r.op, err)
	}
}

func (s *Service) prepare(ctx context.Context, r *opRun, req PrepareRequest) error {
	p, ok, err := s.lookup(ctx, req.PackageID)
	if err != nil {
		return err
	}
	if !ok {
		return &Error{Code: CodePackageNotFound, Message: "no package " + req.PackageID}
	}
	m := p.src.m
	if m.ViewerPackageID != nil {
		if err := s.ensureInstalled(ctx, r, *m.ViewerPackageID, true); err != nil {
			return err
		}
	}
	if err := s.ensureInstalled(ctx, r, m.PackageID, false); err != nil {
		return err
	}
	if err := r.step(ctx, PhaseDoctor); err != nil {
		return err
	}
	var lines []string
	ids := []string{m.PackageID}
	if m.ViewerPackageID != nil {
		ids = []string{*m.ViewerPackageID, m.PackageID}
	}
	for _, id := range ids {
		rd, err := s.doctor(ctx, id)
		if err != nil {
			return err
		}
		for _, l := range rd.Lines {
			lines = append(lines, id+": "+l)
		}
		r.setDoctor(lines)
		if rd.State == ReadinessFailed {
			code := CodeDoctorFailed
			if id != m.PackageID {
				code = CodeDependencyNotReady
			}
			return &Error{Code: code, Message: "the doctor of " + id + " failed on this machine", Guidance: "read the doctor lines, install what they name, then prepare again with a new key"}
		}
	}
	if err := r.step(ctx, PhaseWorkspace); err != nil {
		return err
	}
	ws, err := s.makeWorkspace(ctx, r, p, req.Workspace)
	if err != nil {
		return err
	}
	defer s.release(ws.dir, r.op.ID)
	r.op.Workspace = ws.dir
	if err := r.step(ctx, PhaseCreate); err != nil {
		return err
	}
	name := filepath.Base(ws.dir)
	a := store.AgentRecord{ID: "ag_" + randHex(8), Name: name, PackageID: m.PackageID, Engine: m.Engine, ProjectID: ws.projectID,
		Workspace: ws.dir, OperationID: r.op.ID, CreatedAt: s.now()}
	if err := s.createAgent(ctx, a); err != nil { // with its pending reveal (reveal.go)
		if errors.Is(err, store.ErrConflict) {
			return &Error{Code: CodeWorkspaceInUse, Message: "another agent has this workspace", Guidance: defaultGuidance(CodeWorkspaceInUse)}
		}
		return &Error{Code: CodeCreationUnconfirmed, Message: "the agent's creation could not be confirmed", Guidance: "inspect aos agent ls before any new attempt", Err: err}
	}
	if s.opts.AfterCreate != nil {
		s.opts.AfterCreate(r.op.ID)
	}
	r.op.AgentID = a.ID
	if err := r.step(ctx, PhaseLaunch); err != nil {
		return err
	}
	return s.launch(ctx, r)
}

// launch checks that the agent's engine can start a mission now; if so the
// operation is ready (no task is sent), otherwise ENGINE_ACTION_REQUIRED at
// once, since the check's failure is a known one. Polling re-checks it.
func (s *Service) launch(ctx context.Context, r *opRun) error {
	if err := s.launchCheck(ctx, r.op.AgentID); err != nil {
		return err
	}
	r.op.State, r.op.Phase, r.op.UpdatedAt = StateReady, PhaseComplete, s.now()
	r.op.ErrorCode, r.op.ErrorMessage, r.op.Guidance = "", "", ""
	return s.save(ctx, r.op)
}

func (s *Service) launchCheck(ctx context.Context, agentID string) error {
	a, err := s.st.GetAgent(ctx, agentID)
	if err != nil {
		return &Error{Code: CodeAgentUnavailable, Message: "the agent is not recorded", Err: err}
	}
	if err := s.ms.CheckEngine(ctx, a.Engine); err != nil {
		msg := strings.TrimPrefix(err.Error(), "mission: ")
		return &Error{Code: CodeEngineActionRequired, Message: "engine " + a.Engine + " cannot start: " + msg, Guidance: defaultGuidance(CodeEngineActionRequired), Err: err}
	}
	return nil
}
