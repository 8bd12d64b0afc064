// Package hostconfig loads aos's configuration files (issue 15, S05–S07):
// the repo-global .aos/config.yaml of a project, which aos only ever reads,
// and the user-local $XDG_CONFIG_HOME/aos/config.yaml of the device. Both
// are strict: one YAML document at a supported schema version, unknown
// fields refused (credentials and environment values have no field, so
// they are refused too), every error naming file, line and field.
//
// A Snapshot holds the SHA-256 of each input and a derived revision; its
// Effective view merges repo < user overrides < the user's per-project
// overrides (a present scalar replaces, maps merge by key, ordered arrays
// are replaced whole) and says where each value came from. A Registry keeps
// the last valid snapshot per project and, with fsnotify, publishes only
// valid changed revisions. Select turns the ordered selection rules into
// a route of targets, with no side effect.
//
// Environment variables (AOS_DATA_DIR, …) are package config's. This
// package imports only termtext of aos's: values must hold no control
// characters, and errors are safe to print.
package hostconfig
