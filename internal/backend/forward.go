package backend

// ForwarderArg is the first argument that makes the aos binary (or a test
// binary) run the in-sandbox forwarder.
const ForwarderArg = "aos-backend-forward"

// ForwarderMain runs the forwarder and returns its exit code.
func ForwarderMain(args []string) int { return 2 }
