-- Owner security (seed 001 §8): the single owner account, its setup token,
-- browser sessions, WebAuthn passkeys and ceremonies, and login throttling.
-- Secrets are stored only hashed (SHA-256: setup token, session id) or
-- encrypted (AES-GCM under the server key: the TOTP secret).
CREATE TABLE owner_account (
  id               SMALLINT PRIMARY KEY CHECK (id = 1),
  password_hash    TEXT NOT NULL,
  totp_secret_enc  TEXT NOT NULL,
  totp_last_step   BIGINT NOT NULL DEFAULT 0,
  webauthn_user_id TEXT NOT NULL,
  created_at       BIGINT NOT NULL
);

CREATE TABLE setup_tokens (
  id               SMALLINT PRIMARY KEY CHECK (id = 1),
  hash             TEXT NOT NULL,
  pending_totp_enc TEXT NOT NULL DEFAULT '',
  expires_at       BIGINT NOT NULL,
  created_at       BIGINT NOT NULL
);

CREATE TABLE owner_sessions (
  public_id    TEXT PRIMARY KEY,
  hash         TEXT NOT NULL UNIQUE,
  method       TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  revoked_at   BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE auth_throttle (
  key          TEXT PRIMARY KEY,
  failures     BIGINT NOT NULL,
  last_failure BIGINT NOT NULL,
  locked_until BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE webauthn_credentials (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL DEFAULT '',
  credential   TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE webauthn_ceremonies (
  challenge  TEXT PRIMARY KEY,
  kind       TEXT NOT NULL,
  data       TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
