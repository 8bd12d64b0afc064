// Command aos is the single aos binary: worker, server (later), client and
// developer tools. It holds no logic; see internal/cli.
package main

import (
	"os"

	"github.com/aos-run/aos/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() { os.Exit(cli.Execute(version)) }
