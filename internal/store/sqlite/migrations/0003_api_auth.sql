-- API tokens (hashed at rest) and the audit log of mutations (seed 001 §8).
CREATE TABLE api_tokens (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL DEFAULT '',
  hash         TEXT NOT NULL UNIQUE,
  scopes       TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  revoked_at   INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE audit_log (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  target     TEXT NOT NULL DEFAULT '',
  detail     TEXT NOT NULL DEFAULT '{}'
);

-- Costed steps by end time, for spend by model.
CREATE INDEX steps_costed ON steps(ended_at) WHERE cost_usd <> 0;
