-- Paired devices (issue 16, seed 000's device channel): the one-time
-- pairing codes the owner shows and the devices that exchanged one for a
-- device-role token. Both secrets are stored only as their SHA-256.
-- Revoking a device keeps its row (revoked_at), so the audit log and the
-- preparation operations it owns still name it; nothing is deleted.
CREATE TABLE device_pairings (
  hash       TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);

CREATE TABLE devices (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  token_hash   TEXT NOT NULL UNIQUE,
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL DEFAULT 0,
  revoked_at   INTEGER NOT NULL DEFAULT 0
);
