package tool

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// ListDirMaxEntries caps list_dir's output.
const ListDirMaxEntries = 1000

type listDirInput struct {
	Path *string `json:"path"`
}

func (listDirInput) validate() error { return nil }

// ListDir returns the list_dir tool: a directory's entries, directories
// with a trailing slash, symlinks with their target.
func ListDir() Tool {
	return &def[listDirInput]{
		name:         "list_dir",
		description:  "List a directory in the workspace. Directories end with /, symlinks show their target.",
		schema:       mustJSON(object(optStr("path", "Directory, relative to the workspace; null for the workspace root."))),
		effect:       always[listDirInput](EffectRead),
		risk:         riskAlways[listDirInput](RiskRead),
		parallelSafe: true,
		run:          runListDir,
		approval:     func(in listDirInput) Approval { return Approval{Title: "List " + deref(in.Path, ".")} },
	}
}

func runListDir(_ context.Context, tc *Context, in listDirInput) (Result, error) {
	p := deref(in.Path, ".")
	rel, err := relName(tc.Workspace, p)
	if err != nil {
		return fail("%v", err), nil
	}
	w, err := openWorkspace(tc.Workspace)
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = w.Close() }()
	// The directory is opened beneath the workspace; its entries are then
	// looked at relative to that descriptor, never by path again.
	d, err := w.open(rel)
	if err != nil {
		return fail("%v", pathErr(p, err)), nil
	}
	defer func() { _ = d.Close() }()
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		return fail("%s is not a directory", p), nil
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		return fail("%v", pathErr(p, err)), nil
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	fd := int(d.Fd())
	var b strings.Builder
	for i, e := range ents {
		if i == ListDirMaxEntries {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(ents)-i)
			break
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			buf := make([]byte, 4096)
			n, _ := unix.Readlinkat(fd, e.Name(), buf)
			fmt.Fprintf(&b, "%s@ -> %s\n", e.Name(), buf[:max(n, 0)])
		case e.IsDir():
			b.WriteString(e.Name() + "/\n")
		default:
			size := int64(-1)
			var st unix.Stat_t
			if unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				size = st.Size
			}
			fmt.Fprintf(&b, "%s (%d bytes)\n", e.Name(), size)
		}
	}
	if len(ents) == 0 {
		b.WriteString("(empty directory)\n")
	}
	return Result{OK: true, Output: b.String(), Trust: TrustUntrusted}, nil
}
