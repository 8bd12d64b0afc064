package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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
	r, err := ResolvePath(tc.Workspace, p)
	if err != nil {
		return fail("%v", err), nil
	}
	ents, err := os.ReadDir(r.Abs)
	if err != nil {
		return fail("%s: %v", p, errors.Unwrap(err)), nil
	}
	var b strings.Builder
	for i, e := range ents {
		if i == ListDirMaxEntries {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(ents)-i)
			break
		}
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(r.Abs + "/" + e.Name())
			fmt.Fprintf(&b, "%s@ -> %s\n", e.Name(), target)
		case e.IsDir():
			b.WriteString(e.Name() + "/\n")
		default:
			size := int64(-1)
			if fi, err := e.Info(); err == nil {
				size = fi.Size()
			}
			fmt.Fprintf(&b, "%s (%d bytes)\n", e.Name(), size)
		}
	}
	if len(ents) == 0 {
		b.WriteString("(empty directory)\n")
	}
	return Result{OK: true, Output: b.String(), Trust: TrustUntrusted}, nil
}
