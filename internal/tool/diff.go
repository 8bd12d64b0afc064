package tool

import (
	"fmt"
	"strings"
)

// simpleDiff renders a minimal unified-style diff of one file: the common
// prefix and suffix lines are trimmed and the rest shown as one hunk. It
// is for the model and approvals, not for patch(1).
func simpleDiff(path, before, after string) string {
	if before == after {
		return ""
	}
	a, b := splitLines(before), splitLines(after)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var s strings.Builder
	fmt.Fprintf(&s, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", path, path, pre+1, len(a)-pre-suf, pre+1, len(b)-pre-suf)
	for _, l := range a[pre : len(a)-suf] {
		s.WriteString("-" + l + "\n")
	}
	for _, l := range b[pre : len(b)-suf] {
		s.WriteString("+" + l + "\n")
	}
	return s.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
