// Package api is aos's HTTP front end under /api/v1 and its WebSocket of
// events. Handlers parse, authenticate and present; every rule lives in
// internal/mission, the service they call.
//
// Auth (this slice): API tokens only. Every route but GET /api/v1/health
// needs "Authorization: Bearer aos_…" naming a live token whose scopes
// cover the route (read for GET, write for mutations). The events
// WebSocket also takes the token as a subprotocol (see events.go), since
// browsers cannot set headers on a WebSocket; never in the query string.
//
// Package api may import mission and what it exposes; it must not import
// kernel or store directly: the service is the seam.
package api
