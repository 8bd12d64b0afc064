// Package console serves the owner's web console: the static assets that
// web/ builds (Vite, Preact) and that are committed under dist/, embedded in
// the binary with go:embed, so that neither running nor building aos needs
// Node. Every document carries a strict Content-Security-Policy; the app
// talks to the API (/api/v1) on the same origin and renders every byte a
// model or a tool wrote as text.
//
// It imports nothing of aos: the api package mounts Handler at "/".
package console
