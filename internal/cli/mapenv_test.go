package cli

// mapEnv returns an environment holding exactly m, for withEnv: a test
// gives a command its environment without touching the process's, so it
// can run in parallel.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
