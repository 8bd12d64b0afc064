// Package tmpdirs names the directories aos makes under the system's
// temporary directory and sweeps those a killed process left behind.
//
// aos keeps its state in the data dir; what it must put under TMPDIR is
// short-lived and removed by the process that made it: hardened git's empty
// HOME for each git run (gitx), the sandbox probe's scratch tree (sandbox).
// A process killed with SIGKILL removes nothing, so a worker sweeps, at
// start, the ones of this user old enough that no live process still uses
// them.
package tmpdirs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The prefixes of aos's directories under TMPDIR (os.MkdirTemp patterns).
const (
	// GitHome is hardened git's HOME for one git run: empty, removed
	// when the run ends.
	GitHome = "aos-git-home-"
	// Probe is the sandbox probe's scratch tree, removed when the probe
	// ends.
	Probe = "aos-probe-"
	// ProbeOpen is the scratch workspace of the probe of network "open",
	// removed when it ends.
	ProbeOpen = "aos-probe-open-"
)

// StaleAfter is how old a directory must be before a sweep removes it:
// far longer than a git run (a clone's timeout is configurable) or a probe
// lasts.
const StaleAfter = 24 * time.Hour

// Sweep removes, under tmp, the directories named prefix followed by
// os.MkdirTemp's random suffix that this user owns privately (mode 0700,
// as os.MkdirTemp makes them) and that were last changed before
// now-StaleAfter: the leftovers of processes killed before they could
// remove their own. tree says whether a directory may hold files (removed
// with it, links not followed) or must be empty (anything else is left).
// It returns how many it removed; what it cannot judge it leaves.
func Sweep(tmp, prefix string, tree bool, now time.Time) int {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, prefix) || !digits(name[len(prefix):]) {
			continue
		}
		dir := filepath.Join(tmp, name)
		fi, err := os.Lstat(dir)
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || !fi.IsDir() || fi.Mode().Perm() != 0o700 || int(st.Uid) != os.Geteuid() || !fi.ModTime().Before(now.Add(-StaleAfter)) {
			continue
		}
		if tree {
			err = os.RemoveAll(dir)
		} else {
			err = syscall.Rmdir(dir)
		}
		if err == nil {
			removed++
		}
	}
	return removed
}

// digits reports whether s is os.MkdirTemp's suffix: decimal digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
