//go:build !unix

package mission

import "os/exec"

// ownGroup leaves cmd as it is where process groups do not exist;
// cancellation kills git itself.
func ownGroup(*exec.Cmd) {}
