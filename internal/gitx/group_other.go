//go:build !unix

package gitx

import "os/exec"

// ownGroup leaves cmd as it is where process groups do not exist;
// cancellation then kills git alone.
func ownGroup(*exec.Cmd) {}
