package engine_test

// runChild is the child side of the engine's multi-process tests.
func runChild(role string) int { return 2 }
