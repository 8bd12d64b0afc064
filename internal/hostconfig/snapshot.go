package hostconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// RepoPath is where a project's repo-global file lives, relative to its
// root.
const RepoPath = ".aos/config.yaml"

// UserPath returns the user-local file's path: $XDG_CONFIG_HOME/aos/
// config.yaml, else ~/.config/aos/config.yaml.
func UserPath(getenv func(string) string) (string, error) {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "aos", "config.yaml"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("hostconfig: no XDG_CONFIG_HOME and no home directory (HOME)")
	}
	return filepath.Join(home, ".config", "aos", "config.yaml"), nil
}

// InputFile is one input of a snapshot: its path and the SHA-256 of its
// exact bytes ("" when the file is absent).
type InputFile struct {
	Kind   string `json:"kind"` // repo or user
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
}

// Snapshot is one valid composition of a project's repo-global file and
// the user-local file. It is immutable; accessors return copies.
type Snapshot struct {
	// Revision is derived from the schema version, the project root and
	// every input's hash: equal inputs give equal revisions.
	Revision string
	Inputs   []InputFile
	root     string
	repo     *RepoFile
	repoP    *parsed
	user     *UserFile
	userP    *parsed
}

// Load reads and validates the repo-global file of the project at root and
// the user-local file at userPath. Either may be absent. It only reads:
// nothing is ever written to the project.
func Load(root, userPath string) (*Snapshot, error) {
	if !filepath.IsAbs(root) || !filepath.IsAbs(userPath) {
		return nil, fmt.Errorf("hostconfig: project root and user file must be absolute paths")
	}
	s := &Snapshot{root: filepath.Clean(root)}
	repoFile := filepath.Join(s.root, RepoPath)
	data, sum, err := readOptional(repoFile, false)
	if err != nil {
		return nil, err
	}
	s.Inputs = append(s.Inputs, InputFile{Kind: "repo", Path: repoFile, SHA256: sum})
	if data != nil {
		if s.repo, s.repoP, err = parseRepo(repoFile, data); err != nil {
			return nil, err
		}
	}
	data, sum, err = readOptional(userPath, true)
	if err != nil {
		return nil, err
	}
	s.Inputs = append(s.Inputs, InputFile{Kind: "user", Path: userPath, SHA256: sum})
	if data != nil {
		if s.user, s.userP, err = parseUser(userPath, data); err != nil {
			return nil, err
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "aos-config/%d\nroot %s\n", SchemaVersion, s.root)
	for _, in := range s.Inputs {
		fmt.Fprintf(h, "%s %s %s\n", in.Kind, in.Path, orAbsent(in.SHA256))
	}
	s.Revision = hex.EncodeToString(h.Sum(nil))[:32]
	return s, nil
}

// LoadUser reads and validates the user-local file at path alone, for
// what is needed before any project (the client programs aos up owns).
// An absent file is (nil, nil). It is read by Load's rule: opened once,
// without blocking, and refused with an *Error unless it is a regular
// file, so that a FIFO or a device there cannot hang the caller.
func LoadUser(path string) (*UserFile, error) {
	data, _, err := readOptional(path, true)
	if err != nil || data == nil {
		return nil, err
	}
	return ParseUser(path, data)
}

// readOptional reads a regular file; an absent one is (nil, "", nil). The
// file is opened once and checked on its descriptor, never stat-then-read.
// The repository's file (follow false) is what a merged branch could have
// made a symlink or a FIFO, so it is opened without following a final
// symlink and without blocking; the owner's own file (follow true) may be a
// dotfile manager's symlink.
func readOptional(path string, follow bool) ([]byte, string, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, "", &Error{File: path, Msg: "is a symbolic link; aos reads only a regular file here"}
	}
	if err != nil {
		return nil, "", &Error{File: path, Msg: "cannot open: " + err.Error()}
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", &Error{File: path, Msg: "cannot stat: " + err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, "", &Error{File: path, Msg: "not a regular file"}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, "", &Error{File: path, Msg: "cannot read: " + err.Error()}
	}
	if len(data) > MaxFileSize {
		return nil, "", &Error{File: path, Msg: fmt.Sprintf("larger than %d bytes", MaxFileSize)}
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:]), nil
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

// Root is the project root the snapshot is for.
func (s *Snapshot) Root() string { return s.root }

// Effective is a project's merged configuration at one revision.
type Effective struct {
	Revision string      `json:"revision"`
	Inputs   []InputFile `json:"inputs"`
	// Project is the matching registration's index in the user file, or
	// -1.
	Project int   `json:"project"`
	Paths   Paths `json:"paths"`
	Layer
	// Sources says where each present value came from, by dotted path.
	Sources map[string]Source `json:"sources"`
}

// Effective merges the snapshot for the project: repo file, then the user
// file's overrides, then the overrides of the user's registration of this
// project (matched by root path, else by projectID). The result is a deep
// copy.
func (s *Snapshot) Effective(projectID string) Effective {
	var in []layerInput
	if s.repo != nil {
		in = append(in, layerInput{name: "repo", l: &s.repo.Layer, p: s.repoP})
	}
	e := Effective{Revision: s.Revision, Inputs: append([]InputFile(nil), s.Inputs...), Project: -1}
	if s.user != nil {
		in = append(in, layerInput{name: "user", l: &s.user.Overrides, p: s.userP, prefix: "overrides"})
		e.Project = s.user.match(s.root, projectID)
		if e.Project >= 0 {
			in = append(in, layerInput{name: fmt.Sprintf("user:projects[%d]", e.Project), l: &s.user.Projects[e.Project].Overrides,
				p: s.userP, prefix: fmt.Sprintf("projects[%d].overrides", e.Project)})
		}
		e.Paths = s.user.Paths
	}
	e.Layer, e.Sources = mergeLayers(in)
	// A deep copy, so that no caller can change the snapshot.
	b, err := json.Marshal(e)
	if err == nil {
		var c Effective
		if json.Unmarshal(b, &c) == nil {
			return c
		}
	}
	return e
}

// match returns the registration of the project at root (or with id), or
// -1.
func (u *UserFile) match(root, id string) int {
	for i, p := range u.Projects {
		if filepath.Clean(p.Path) == root {
			return i
		}
	}
	for i, p := range u.Projects {
		if id != "" && p.ID == id {
			return i
		}
	}
	return -1
}
