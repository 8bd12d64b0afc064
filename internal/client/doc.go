// Package client is a small typed client of the aos server's API
// (/api/v1): JSON requests and responses with the mission and api types,
// errors decoded into *Error, and the events WebSocket with resume from a
// cursor (Follow).
//
// It may import internal/mission and internal/api for their types, never
// the kernel, the store or the engine (internal/layering checks it). It
// never prints or logs the token: not in errors, not in URLs.
package client
