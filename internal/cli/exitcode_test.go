package cli

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/kernel"
)

// TestExitCodeTable: docs/CLI.md's exit-code table lists exactly the codes
// of the exitCode type (read from its source, so a new constant must be
// documented), and the statuses of a mission map onto it.
func TestExitCodeTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "exitcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var typed []int
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "exitCode" {
				t.Errorf("constant %s is not of type exitCode", vs.Names[0])
				continue
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok {
				t.Fatalf("exit code %s is not a literal", vs.Names[0])
			}
			v, _ := constant.Int64Val(constant.MakeFromLiteral(lit.Value, lit.Kind, 0))
			typed = append(typed, int(v))
		}
	}
	doc, err := os.ReadFile("../../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## Exit codes")
	if !ok {
		t.Fatal("docs/CLI.md has no Exit codes section")
	}
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(table, -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	slices.Sort(typed)
	if len(typed) < 9 || !slices.Equal(typed, documented) {
		t.Fatalf("exitCode has %v, docs/CLI.md documents %v", typed, documented)
	}

	for status, want := range map[string]exitCode{kernel.StatusDone: exitOK, kernel.StatusPartial: exitPartial, kernel.StatusCancelled: exitCancelled,
		kernel.StatusBlocked: exitUnfinished, kernel.StatusFailed: exitUnfinished, kernel.StatusBudgetExhausted: exitUnfinished} {
		if got := statusExit(status); got != want {
			t.Errorf("status %s: exit %d, want %d", status, got, want)
		}
	}
}
