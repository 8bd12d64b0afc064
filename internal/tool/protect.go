package tool

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Project instructions and aos's own directory are protected in the
// workspace whether or not they exist, in any letter case: aos reads
// AGENTS.md and CLAUDE.md into the next run's system prompt, and .aos/
// belongs to aos. The file tools refuse them (Protected). The shell cannot
// be refused by name, so it gets two layers:
//   - the ones that exist when a command starts (in any case) are bound
//     read-only into its sandbox;
//   - after the command, any top-level entry with a protected name that
//     the command created is removed, and the result says so.
// The engine reads the instruction files with O_NOFOLLOW, regular files
// only, so a symlink that exists for the moment between a command and
// this check is never followed (engine/prompt.go).

// protectedTopNames are the protected workspace entries, lower-cased.
var protectedTopNames = map[string]bool{"agents.md": true, "claude.md": true, ".aos": true}

// protectedEntries lists the workspace's top-level entries whose name is
// protected in any case.
func protectedEntries(ws string) (map[string]bool, error) {
	d, err := os.Open(ws)
	if err != nil {
		return nil, fmt.Errorf("tool: open workspace: %w", err)
	}
	defer func() { _ = d.Close() }()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("tool: list workspace: %w", err)
	}
	out := map[string]bool{}
	for _, n := range names {
		if protectedTopNames[strings.ToLower(n)] {
			out[n] = true
		}
	}
	return out, nil
}

// undoProtected removes the protected top-level entries that were not
// there before the command, and returns their names. Those that were
// there are bound read-only in the sandbox, so the command could neither
// change, remove nor replace them (a mount point cannot be renamed over).
// Only new names are removed: a file the owner edits meanwhile is never
// touched.
func undoProtected(ws string, before map[string]bool) ([]string, error) {
	after, err := protectedEntries(ws)
	if err != nil {
		return nil, err
	}
	var added []string
	for n := range after {
		if !before[n] {
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	sort.Strings(added)
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("tool: open workspace: %w", err)
	}
	defer func() { _ = root.Close() }()
	for _, n := range added {
		// RemoveAll within the root never follows a symlink out.
		if err := root.RemoveAll(n); err != nil {
			return added, fmt.Errorf("tool: remove protected %s the command created: %w", n, err)
		}
	}
	return added, nil
}

// protectedNote tells the model what undoProtected removed.
func protectedNote(removed []string) string {
	return fmt.Sprintf("[aos removed %s: this command created it, and AGENTS.md, CLAUDE.md and .aos/ are read-only in the workspace, in any letter case]\n",
		strings.Join(removed, ", "))
}
