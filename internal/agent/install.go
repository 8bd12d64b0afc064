package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

// ensureInstalled installs a package once for every concurrent
// preparation that needs it: the first caller installs, the others wait
// for its result. An installed package is left as it is (no implicit
// update), a broken one is never overwritten, and a package the owner has
// not reviewed is never installed. dep marks the shared viewer dependency,
// whose problems are DEPENDENCY_NOT_READY or PACKAGE_REVIEW_REQUIRED.
func (s *Service) ensureInstalled(ctx context.Context, r *opRun, id string, dep bool) error {
	s.mu.Lock()
	if j, ok := s.installs[id]; ok {
		s.mu.Unlock()
		if err := r.step(ctx, PhaseInstall); err != nil {
			return err
		}
		select {
		case <-j.done:
			return j.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p, ok, err := s.lookup(ctx, id)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	notReady := func(code, msg, guidance string) error {
		if dep && code != CodePackageReviewRequired {
			code, msg = CodeDependencyNotReady, "dependency "+id+": "+msg
		}
		return &Error{Code: code, Message: msg, Guidance: guidance}
	}
	switch {
	case !ok:
		s.mu.Unlock()
		return notReady(CodePackageNotFound, "no package "+id+" on this machine", "refresh the catalog and choose an actual package")
	case p.state() == InstallInstalled:
		s.mu.Unlock()
		return nil
	case p.state() == InstallBroken:
		s.mu.Unlock()
		why := p.row.Broken
		if p.bad != "" {
			why = p.bad
		}
		return notReady(CodePackageBroken, "the installation of "+id+" is broken: "+why, "repair or remove it on this machine (aos package ls shows it); aos never overwrites a broken install")
	case p.state() == InstallInstalling:
		s.mu.Unlock()
		return notReady(CodeDSHBusy, id+" is being installed by another process", "wait for that installation to finish, then prepare again with the same key")
	case !p.allowed():
		s.mu.Unlock()
		return &Error{Code: CodePackageReviewRequired, Message: id + " is a community package the owner has not reviewed",
			Guidance: "the owner reviews it on this machine first: aos package review " + id}
	}
	j := &installJob{done: make(chan struct{})}
	s.installs[id] = j
	s.mu.Unlock()
	j.err = s.install(ctx, r, p)
	s.mu.Lock()
	delete(s.installs, id)
	s.mu.Unlock()
	close(j.done)
	return j.err
}

// install copies a package's tree to its install dir and runs its setup
// script. The index says installing before anything happens on disk, so a
// crash leaves a row that recovery marks broken (never retried silently).
func (s *Service) install(ctx context.Context, r *opRun, p pkgInfo) error {
	id := p.src.m.PackageID
	if err := r.step(ctx, PhaseInstall); err != nil {
		return err
	}
	row := p.row
	if !p.hasRow {
		row = store.AgentPackage{PackageID: id, Source: SourceOfficial, Manifest: nil}
		if b, err := readManifestBytes(p.src); err == nil {
			row.Manifest = b
		}
	}
	dir := s.installDir(id)
	row.Dir, row.Version, row.State, row.Broken, row.UpdatedAt = dir, p.src.version, InstallInstalling, "", s.now()
	if err := s.st.StartAgentPackageInstall(ctx, row); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return s.installConflict(ctx, row)
		}
		return storageErr("record the installation", err)
	}
	broken := func(code, why string, lines []string) error {
		row.State, row.Broken, row.UpdatedAt = InstallBroken, why, s.now()
		if err := s.st.UpsertAgentPackage(context.WithoutCancel(ctx), row); err != nil {
			return &Error{Code: CodeInstallUnconfirmed, Message: "installation failed and could not be recorded", Guidance: "inspect " + dir + " before any new attempt", Err: err}
		}
		r.setDoctor(lines)
		return &Error{Code: code, Message: why, Guidance: "see the doctor lines; repair the package on this machine (aos package ls shows it broken)"}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return broken(CodePackageBroken, "cannot make the install directory", nil)
	}
	if err := os.CopyFS(dir, p.src.fsys); err != nil {
		return broken(CodePackageBroken, "cannot copy the package tree: "+err.Error(), nil)
	}
	// The copy is what runs: it must be the version recorded (and, for a
	// community package, reviewed), not a tree a concurrent add put in
	// its source directory since the row was read.
	if got, err := loadPackage(os.DirFS(dir)); err != nil || got.version != row.Version {
		return broken(CodePackageBroken, "the package's tree changed while it was being installed (another version was added); its setup was not run", nil)
	}
	if p.src.m.Setup != "" {
		if err := r.step(ctx, PhaseSetup); err != nil {
			return broken(CodeInstallUnconfirmed, "installation stopped before setup: "+err.Error(), nil)
		}
		res := runScript(ctx, dir, p.src.m.Setup, s.scriptEnv(id, dir), s.opts.SetupTimeout)
		if res.Err != nil || !res.OK {
			why := "setup failed"
			if res.Err != nil {
				why = "setup: " + res.Err.Error()
			} else if n := len(res.Lines); n > 0 {
				why += ": " + res.Lines[n-1]
			}
			return broken(CodeSetupFailed, why, res.Lines)
		}
	}
	row.State, row.UpdatedAt = InstallInstalled, s.now()
	if err := s.st.UpsertAgentPackage(context.WithoutCancel(ctx), row); err != nil {
		return &Error{Code: CodeInstallUnconfirmed, Message: "the installation finished but could not be recorded", Guidance: "inspect " + dir, Err: err}
	}
	return nil
}

// installConflict explains a refused StartAgentPackageInstall: another
// server began (or finished, or broke) the install since row was read, or
// a community package's row now holds another, unreviewed version.
func (s *Service) installConflict(ctx context.Context, row store.AgentPackage) error {
	id := row.PackageID
	cur, err := s.st.GetAgentPackage(ctx, id)
	if err == nil && cur.Source == SourceCommunity && cur.State != InstallInstalling && cur.State != InstallInstalled && cur.State != InstallBroken &&
		(cur.Version != row.Version || cur.ReviewedAt == 0) {
		return &Error{Code: CodePackageReviewRequired, Message: id + " changed since it was read (another version was added); the new version is not reviewed",
			Guidance: "the owner reads it and reviews it on this machine: aos package review " + id}
	}
	return &Error{Code: CodeDSHBusy, Message: id + " is being installed by another aos server", Guidance: "wait for that installation to finish, then prepare again with a new key"}
}

func readManifestBytes(src pkgSource) ([]byte, error) { return fs.ReadFile(src.fsys, ManifestFile) }

func (s *Service) scriptEnv(id, dir string) []string {
	return scriptEnv(s.opts.Getenv, "AOS_PACKAGE_ID="+id, "AOS_PACKAGE_DIR="+dir)
}

// doctor runs an installed package's doctor and caches the readiness
// (state, time, version, bounded lines) until the version changes or aos
// restarts. A package without a doctor is unknown, which does not block.
func (s *Service) doctor(ctx context.Context, id string) (Readiness, error) {
	p, ok, err := s.lookup(ctx, id)
	if err != nil {
		return Readiness{}, err
	}
	rd := Readiness{State: ReadinessUnknown, Scope: "package_doctor", EngineAuthentication: "unknown", TaskSuccess: "unknown"}
	if !ok || p.state() != InstallInstalled {
		rd.State = ReadinessNotInstalled
		return rd, nil
	}
	at, v := s.now(), p.row.Version
	rd.CheckedAt, rd.Version = &at, &v
	if p.src.m.Doctor != "" {
		res := runScript(ctx, p.row.Dir, p.src.m.Doctor, s.scriptEnv(id, p.row.Dir), s.opts.DoctorTimeout)
		rd.Lines = res.Lines
		rd.State = ReadinessFailed
		if res.OK && res.Err == nil {
			rd.State = ReadinessPassed
		} else if res.Err != nil {
			rd.Lines = lastLines(strings.Join(append(rd.Lines, res.Err.Error()), "\n"))
		}
	}
	s.mu.Lock()
	s.readiness[id] = rd
	s.mu.Unlock()
	return rd, nil
}
