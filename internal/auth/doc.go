// Package auth holds the owner-security business rules of aos server: the
// first-run setup token, the owner's password (argon2id) and TOTP (RFC 6238),
// WebAuthn passkeys, browser sessions, CSRF tokens and login throttling.
// The HTTP API (internal/api) only parses requests and presents results.
//
// It imports store and nothing else of ours: not mission, kernel or any
// front end. Secrets (password, TOTP secret, session id, setup token) never
// reach an error, a log line or an audit record; session ids and the setup
// token are stored as SHA-256, the TOTP secret encrypted with AES-GCM under
// the server key (LoadKey).
package auth
