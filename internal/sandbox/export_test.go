package sandbox

// WithBeforeGo returns c with a hook called with the command's argv
// between the lifeline's "ready" and "go", for tests that kill aos there.
func WithBeforeGo(c Config, f func(argv []string)) Config {
	c.beforeGo = f
	return c
}

// WithLateCgroupMove returns c without the early move of bwrap's child
// into the command's cgroup: the wrapper is moved just before "go".
func WithLateCgroupMove(c Config) Config {
	c.lateCgroupMove = true
	return c
}

// WarmStarts is how many sandboxes w has started.
func WarmStarts(w *Warm) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.starts
}
