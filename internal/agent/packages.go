package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/store"
)

// Package sources in the installed index.
const (
	SourceOfficial  = "official"
	SourceCommunity = "community"
)

// pkgInfo is everything known of one package: its tree and its index row.
type pkgInfo struct {
	src    pkgSource
	row    store.AgentPackage
	hasRow bool
	// bad is why a community package's tree cannot be loaded, or "".
	bad string
}

func (p pkgInfo) allowed() bool {
	return p.src.official || (p.hasRow && p.row.ReviewedAt > 0)
}

func (p pkgInfo) state() string {
	if p.bad != "" {
		return InstallBroken
	}
	if !p.hasRow || p.row.State == "" {
		return InstallNotInstalled
	}
	return p.row.State
}

// lookup finds a package: official ones are embedded, community ones are
// in the index with their tree under the data dir.
func (s *Service) lookup(ctx context.Context, id string) (pkgInfo, bool, error) {
	row, err := s.st.GetAgentPackage(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return pkgInfo{}, false, storageErr("read the package index", err)
	}
	hasRow := err == nil
	if src, ok := s.official[id]; ok {
		return pkgInfo{src: src, row: row, hasRow: hasRow}, true, nil
	}
	if !hasRow {
		return pkgInfo{}, false, nil
	}
	info := pkgInfo{row: row, hasRow: true}
	var m Manifest
	if m, err = ParseManifest(row.Manifest); err != nil {
		info.bad = err.Error()
	}
	info.src = pkgSource{m: m, fsys: os.DirFS(s.sourceDir(id)), version: row.Version}
	return info, true, nil
}

// all returns every known package, by id.
func (s *Service) all(ctx context.Context) ([]pkgInfo, error) {
	rows, err := s.st.ListAgentPackages(ctx)
	if err != nil {
		return nil, storageErr("list the package index", err)
	}
	byID := map[string]pkgInfo{}
	for id, src := range s.official {
		byID[id] = pkgInfo{src: src}
	}
	for _, r := range rows {
		p := byID[r.PackageID]
		p.row, p.hasRow = r, true
		if _, ok := s.official[r.PackageID]; !ok {
			m, err := ParseManifest(r.Manifest)
			if err != nil {
				p.bad = err.Error()
			}
			p.src = pkgSource{m: m, fsys: os.DirFS(s.sourceDir(r.PackageID)), version: r.Version}
		}
		byID[r.PackageID] = p
	}
	out := make([]pkgInfo, 0, len(byID))
	for _, id := range sortedIDs(byID) {
		out = append(out, byID[id])
	}
	return out, nil
}

func slug(id string) string { return strings.ReplaceAll(id, "/", "__") }

// sourceDir is where a community package's reviewed tree is kept.
func (s *Service) sourceDir(id string) string {
	return filepath.Join(s.opts.DataDir, "packages", "community", slug(id))
}

// installDir is where an installed package's tree is.
func (s *Service) installDir(id string) string {
	return filepath.Join(s.opts.DataDir, "packages", "installed", slug(id))
}

// view is a package as seed 000 shows it.
func (s *Service) view(p pkgInfo) Package {
	m := p.src.m
	pk := Package{PackageID: m.PackageID, Name: m.Name, Description: m.Description, Category: m.Category, Engine: m.Engine,
		Catalog: p.src.official, Verified: p.src.official, InstallAllowed: p.allowed(), ViewerPackageID: m.ViewerPackageID,
		Capabilities: Capabilities{Source: "package_metadata", Description: m.Description, Category: m.Category},
		Requirements: Requirements{Engine: m.Engine, ViewerPackageID: m.ViewerPackageID,
			Note: "application requirements are not structured in package manifests; the package doctor checks them"},
		Installation: p.state(),
		Readiness:    Readiness{State: ReadinessNotInstalled, Scope: "package_doctor", EngineAuthentication: "unknown", TaskSuccess: "unknown"}}
	if pk.PackageID == "" {
		pk.PackageID = p.row.PackageID
	}
	pk.Installed = pk.Installation == InstallInstalled
	if p.hasRow && (p.row.State == InstallInstalled || p.row.State == InstallBroken) && p.row.Version != "" {
		v := p.row.Version
		pk.Version = &v
	}
	if st := pk.Installation; st == InstallBroken {
		why := p.row.Broken
		if p.bad != "" {
			why = "manifest: " + p.bad
		}
		pk.Broken = &why
	}
	s.mu.Lock()
	if pk.Installed {
		pk.Readiness.State = ReadinessUnknown
		if r, ok := s.readiness[pk.PackageID]; ok && r.Version != nil && pk.Version != nil && *r.Version == *pk.Version {
			pk.Readiness = r
		}
	}
	if lp, ok := s.lastPrep[pk.PackageID]; ok {
		pk.LastPreparation = &lp
	}
	s.mu.Unlock()
	return pk
}

// matches reports whether every whitespace-separated term of query occurs
// (case-insensitively) in the package's id, name, description or category.
func matches(m Manifest, query string) bool {
	hay := strings.ToLower(strings.Join([]string{m.PackageID, m.Name, m.Description, m.Category}, "\n"))
	for _, term := range strings.Fields(strings.ToLower(query)) {
		if !strings.Contains(hay, term) {
			return false
		}
	}
	return true
}

// CheckStoreList applies store.list's limits from seed 000 (query at most
// MaxQueryLen characters of UTF-8, offset 0..MaxOffset, limit
// 1..MaxLimit): INVALID_REQUEST otherwise. StoreList applies it; it is
// exported for the front ends' own tests, not for them to re-check.
func CheckStoreList(r StoreListRequest) error {
	if utf8.RuneCountInString(r.Query) > MaxQueryLen || !utf8.ValidString(r.Query) {
		return errf(CodeInvalidRequest, fmt.Sprintf("query must be at most %d characters of UTF-8", MaxQueryLen))
	}
	if r.Offset != nil && (*r.Offset < 0 || *r.Offset > MaxOffset) || r.Limit != nil && (*r.Limit < 1 || *r.Limit > MaxLimit) {
		return errf(CodeInvalidRequest, fmt.Sprintf("offset must be 0..%d and limit 1..%d", MaxOffset, MaxLimit))
	}
	return nil
}

// StoreList returns one page of the catalog and the installed packages,
// viewer packages excepted. It never runs a script.
func (s *Service) StoreList(ctx context.Context, identity string, r StoreListRequest) (StoreListResult, error) {
	if err := CheckStoreList(r); err != nil {
		return StoreListResult{}, err
	}
	off, lim := 0, DefaultLimit
	if r.Offset != nil {
		off = *r.Offset
	}
	if r.Limit != nil {
		lim = *r.Limit
	}
	ps, err := s.all(ctx)
	if err != nil {
		return StoreListResult{}, err
	}
	var hits []pkgInfo
	for _, p := range ps {
		if p.src.m.Viewer || !matches(p.src.m, r.Query) {
			continue
		}
		// An unreviewed community package is listed too, with
		// installAllowed:false: the owner must review it first.
		hits = append(hits, p)
	}
	res := StoreListResult{MachineID: s.machineID, Packages: []Package{}}
	for i := off; i < len(hits) && i < off+lim; i++ {
		res.Packages = append(res.Packages, s.view(hits[i]))
	}
	if off+lim < len(hits) {
		n := off + lim
		res.NextOffset = &n
	}
	return res, nil
}

// StoreInspect returns a package (viewer packages too) and up to five
// agents recorded with its package identity. It never runs a script.
func (s *Service) StoreInspect(ctx context.Context, identity, packageID string) (StoreInspectResult, error) {
	if !packageIDRe().MatchString(packageID) {
		return StoreInspectResult{}, errf(CodeInvalidRequest, "packageId must look like owner/name")
	}
	p, ok, err := s.lookup(ctx, packageID)
	if err != nil {
		return StoreInspectResult{}, err
	}
	if !ok {
		return StoreInspectResult{}, &Error{Code: CodePackageNotFound, Message: "no package " + packageID + " on this machine", Guidance: "refresh the catalog (store.list) and choose an actual package"}
	}
	ags, err := s.st.ListAgents(ctx, store.ListAgentsParams{PackageID: packageID, Limit: MaxCandidates + 1})
	if err != nil {
		return StoreInspectResult{}, storageErr("list agents", err)
	}
	res := StoreInspectResult{MachineID: s.machineID, Package: s.view(p), Candidates: []Agent{}}
	if len(ags) > MaxCandidates {
		ags, res.CandidatesTruncated = ags[:MaxCandidates], true
	}
	for _, a := range ags {
		res.Candidates = append(res.Candidates, s.agentView(ctx, a))
	}
	return res, nil
}

// Packages returns every package this machine knows, viewers included:
// the official catalog and the installed index (aos package ls).
func (s *Service) Packages(ctx context.Context) ([]Package, error) {
	ps, err := s.all(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Package, 0, len(ps))
	for _, p := range ps {
		out = append(out, s.view(p))
	}
	return out, nil
}

// AddPackage adds a community package from a local directory or a git URL
// (https or ssh, checked by the mission service's clone rule, CloneArgs:
// no private or loopback host unless the owner allows it; cloned by
// gitx's hardened rules, pinned to the checked addresses). Its tree is copied under
// the data dir, so a later review covers exactly what will be installed.
// It is installAllowed:false until ReviewPackage. Nothing is run.
func (s *Service) AddPackage(ctx context.Context, source string) (Package, error) {
	if source == "" || hasControl(source) || len(source) > MaxWorkspacePath {
		return Package{}, errf(CodeInvalidRequest, "source must be a directory or a git URL")
	}
	tmp, err := os.MkdirTemp(filepath.Join(s.opts.DataDir), "package-add-")
	if err != nil {
		return Package{}, fmt.Errorf("agent: add package: %w", err)
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if strings.Contains(source, "://") || strings.HasPrefix(source, "git@") {
		pin, err := s.ms.CloneArgs(ctx, source)
		if err != nil {
			return Package{}, &Error{Code: CodeCloneFailed, Message: strings.TrimPrefix(err.Error(), "mission: "),
				Guidance: "use a public https or ssh git URL; a private or loopback host needs AOS_CLONE_ALLOW_PRIVATE=1 on the server", Err: err}
		}
		res, err := gitx.Run(ctx, gitx.Cmd{Env: s.opts.GitEnv, Timeout: 5 * time.Minute, Args: append(pin, "clone", "-q", "--depth", "1", "--", source, tree)})
		if err != nil || res.Code != 0 {
			return Package{}, &Error{Code: CodeCloneFailed, Message: "git clone failed: " + gitx.FirstLine(res.Combined), Err: err}
		}
	} else {
		abs, err := filepath.Abs(source)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return Package{}, errf(CodeInvalidRequest, "source directory does not exist")
		}
		if err := os.CopyFS(tree, os.DirFS(abs)); err != nil {
			return Package{}, errf(CodeInvalidRequest, "copy package: "+err.Error())
		}
		source = abs
	}
	// A package is its files, not a repository's history: the version
	// (tree hash) and the size limits must not depend on .git.
	if err := os.RemoveAll(filepath.Join(tree, ".git")); err != nil {
		return Package{}, fmt.Errorf("agent: add package: %w", err)
	}
	src, err := loadPackage(os.DirFS(tree))
	if err != nil {
		return Package{}, errf(CodeInvalidRequest, "package: "+err.Error())
	}
	id := src.m.PackageID
	if _, ok := s.official[id]; ok || strings.HasPrefix(id, "aos/") {
		return Package{}, errf(CodeInvalidRequest, "package id "+id+" is reserved for official packages")
	}
	if old, err := s.st.GetAgentPackage(ctx, id); err == nil && old.State != InstallNotInstalled {
		return Package{}, errf(CodeInvalidRequest, "package "+id+" is "+old.State+" already; it is not replaced")
	}
	dst := s.sourceDir(id)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return Package{}, fmt.Errorf("agent: add package: %w", err)
	}
	_ = os.RemoveAll(dst)
	if err := os.Rename(tree, dst); err != nil {
		return Package{}, fmt.Errorf("agent: add package: %w", err)
	}
	b, _ := os.ReadFile(filepath.Join(dst, ManifestFile))
	row := store.AgentPackage{PackageID: id, Source: SourceCommunity, Origin: source, Dir: dst, Manifest: b, Version: src.version,
		State: InstallNotInstalled, UpdatedAt: s.now()}
	if err := s.st.UpsertAgentPackage(ctx, row); err != nil {
		return Package{}, storageErr("record the package", err)
	}
	p, _, err := s.lookup(ctx, id)
	if err != nil {
		return Package{}, err
	}
	return s.view(p), nil
}

// ReviewPackage records that the owner reviewed a community package's
// tree (its version): it becomes installAllowed. Only the review is
// written, and only while the index still holds the version that was
// read: if a concurrent add replaced it, the new tree is not marked
// reviewed and PACKAGE_REVIEW_REQUIRED says to read it and review again.
func (s *Service) ReviewPackage(ctx context.Context, id string) (Package, error) {
	p, ok, err := s.lookup(ctx, id)
	if err != nil {
		return Package{}, err
	}
	if !ok {
		return Package{}, errf(CodePackageNotFound, "no package "+id)
	}
	if p.src.official {
		return s.view(p), nil
	}
	now := s.now()
	if err := s.st.ReviewAgentPackage(ctx, id, p.row.Version, now); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return Package{}, &Error{Code: CodePackageReviewRequired, Message: id + " changed while it was being reviewed (another version was added); the new version is not reviewed",
				Guidance: "read the package again, then: aos package review " + id, Err: err}
		}
		return Package{}, storageErr("record the review", err)
	}
	p.row.ReviewedAt = now
	return s.view(p), nil
}
