package agent

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
)

//go:embed all:packages
var officialFS embed.FS

// pkgSource is where a package's tree is: the embedded official tree, or
// a community package's copy on disk.
type pkgSource struct {
	m        Manifest
	official bool
	fsys     fs.FS // the package's tree, rooted at its directory
	version  string
}

// officialPackages loads the embedded official packages. A broken embedded
// package is a build bug, reported as an error.
func officialPackages() (map[string]pkgSource, error) {
	out := map[string]pkgSource{}
	dirs, err := fs.ReadDir(officialFS, "packages")
	if err != nil {
		return nil, fmt.Errorf("read official packages: %w", err)
	}
	for _, d := range dirs {
		sub, err := fs.Sub(officialFS, path.Join("packages", d.Name()))
		if err != nil {
			return nil, err
		}
		src, err := loadPackage(sub)
		if err != nil {
			return nil, fmt.Errorf("official package %s: %w", d.Name(), err)
		}
		src.official = true
		out[src.m.PackageID] = src
	}
	return out, nil
}

// loadPackage reads and checks a package tree: its tree hash (the version
// recorded on install) first, which refuses links, devices and oversize
// trees before anything is read by name (os.DirFS follows a link, so a
// cloned package's manifest linked to a host file would be read), then
// its manifest and the files it names.
func loadPackage(fsys fs.FS) (pkgSource, error) {
	h, err := treeHash(fsys)
	if err != nil {
		return pkgSource{}, fmt.Errorf("package tree: %w", err)
	}
	b, err := fs.ReadFile(fsys, ManifestFile)
	if err != nil {
		return pkgSource{}, fmt.Errorf("read %s: %w", ManifestFile, err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return pkgSource{}, err
	}
	for _, f := range []string{m.Setup, m.Doctor, m.Instructions} {
		if f == "" {
			continue
		}
		if fi, err := fs.Stat(fsys, f); err != nil || !fi.Mode().IsRegular() {
			return pkgSource{}, fmt.Errorf("manifest names %s, which is not a regular file in the package", f)
		}
	}
	if m.Template != "" {
		if fi, err := fs.Stat(fsys, m.Template); err != nil || !fi.IsDir() {
			return pkgSource{}, fmt.Errorf("manifest names template %s, which is not a directory in the package", m.Template)
		}
	}
	return pkgSource{m: m, fsys: fsys, version: m.Version + "+" + h}, nil
}

func sortedIDs[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
