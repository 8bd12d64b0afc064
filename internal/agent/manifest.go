package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/mission"
)

// ManifestFile is the name of a package's manifest in its directory.
const ManifestFile = "aos-package.json"

// maxManifest bounds a manifest's size; maxTree bounds a package tree.
const (
	maxManifest = 64 << 10
	maxTree     = 32 << 20
	maxFiles    = 2000
)

// Manifest is a package's aos-package.json. Unknown fields are rejected.
// Script, template and instruction names are paths inside the package
// directory.
type Manifest struct {
	PackageID       string   `json:"packageId"`
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Category        string   `json:"category"`
	Engine          string   `json:"engine"`
	ViewerPackageID *string  `json:"viewerPackageId"`
	Version         string   `json:"version"`
	Viewer          bool     `json:"viewer,omitempty"`
	Setup           string   `json:"setup,omitempty"`
	Doctor          string   `json:"doctor,omitempty"`
	Template        string   `json:"template,omitempty"`
	Instructions    string   `json:"instructions,omitempty"`
	Policy          *Policy  `json:"policy,omitempty"`
	Criteria        []string `json:"criteria,omitempty"`
}

// Policy is a package's default mission policy: the sandbox's network
// ("none" or "open") and boundaries the model is given.
type Policy struct {
	Network    string `json:"network,omitempty"`
	Boundaries string `json:"boundaries,omitempty"`
}

var (
	packageIDRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}/[a-z0-9][a-z0-9_.-]{0,79}$`)
	})
	keyRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
	wsNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$`) })
)

// ParseManifest decodes and checks a manifest strictly: one JSON object,
// no unknown fields, every required field present and bounded, and every
// named file a clean relative path.
func ParseManifest(b []byte) (Manifest, error) {
	var m Manifest
	if len(b) > maxManifest {
		return m, fmt.Errorf("manifest is larger than %d bytes", maxManifest)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("manifest: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return m, fmt.Errorf("manifest: trailing data after the object")
	}
	if !packageIDRe().MatchString(m.PackageID) {
		return m, fmt.Errorf("manifest: packageId %q must look like owner/name (lower case letters, digits, _ - .)", m.PackageID)
	}
	for name, v := range map[string]string{"name": m.Name, "description": m.Description, "category": m.Category, "version": m.Version} {
		if v == "" || len(v) > 500 || !utf8.ValidString(v) || hasControl(v) {
			return m, fmt.Errorf("manifest: %s must be 1..500 bytes of text without control characters", name)
		}
	}
	if m.Engine == "" {
		return m, errors.New("manifest: engine is required (builtin or an external engine)")
	}
	if err := mission.ValidEngine(m.Engine); err != nil {
		return m, fmt.Errorf("manifest: %w", err)
	}
	if m.ViewerPackageID != nil && !packageIDRe().MatchString(*m.ViewerPackageID) {
		return m, fmt.Errorf("manifest: viewerPackageId %q is not a package id", *m.ViewerPackageID)
	}
	if m.ViewerPackageID != nil && *m.ViewerPackageID == m.PackageID {
		return m, fmt.Errorf("manifest: a package cannot be its own viewer")
	}
	for name, v := range map[string]string{"setup": m.Setup, "doctor": m.Doctor, "template": m.Template, "instructions": m.Instructions} {
		if v != "" && !cleanRel(v) {
			return m, fmt.Errorf("manifest: %s %q must be a relative path inside the package", name, v)
		}
	}
	if m.Policy != nil && m.Policy.Network != "" && m.Policy.Network != "none" && m.Policy.Network != "open" {
		return m, fmt.Errorf("manifest: policy.network must be none or open")
	}
	if len(m.Criteria) > 20 {
		return m, fmt.Errorf("manifest: at most 20 criteria")
	}
	return m, nil
}

func cleanRel(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != "." && !strings.HasPrefix(p, "../") && p != ".." && !hasControl(p)
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// treeHash is a package tree's version when its manifest's is not enough:
// the SHA-256 of every regular file's path and content, in path order.
// Symbolic links and other non-regular files are refused.
func treeHash(fsys fs.FS) (string, error) {
	var names []string
	total := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (links and devices are refused in packages)", p)
		}
		if names = append(names, p); len(names) > maxFiles {
			return fmt.Errorf("more than %d files", maxFiles)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		if total += len(b); total > maxTree {
			return "", fmt.Errorf("package is larger than %d bytes", maxTree)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
