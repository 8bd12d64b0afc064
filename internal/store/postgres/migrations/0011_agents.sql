-- Agents, packages and preparation (seed 000, issue 16).
--
-- agent_packages is the installed index: one row per package this machine
-- knows beyond the embedded official catalog (a community package added
-- from a directory or git, or any package installed). state is
-- not_installed, installing, installed or broken; broken holds the reason.
-- reviewed_at is when the owner reviewed a community package (0: never).
CREATE TABLE agent_packages (
  package_id   TEXT PRIMARY KEY,
  source       TEXT NOT NULL,
  origin       TEXT NOT NULL DEFAULT '',
  dir          TEXT NOT NULL DEFAULT '',
  manifest     TEXT NOT NULL,
  version      TEXT NOT NULL DEFAULT '',
  state        TEXT NOT NULL,
  broken       TEXT NOT NULL DEFAULT '',
  reviewed_at  BIGINT NOT NULL DEFAULT 0,
  updated_at   BIGINT NOT NULL
);

-- agent_operations is the preparation journal. (identity, idem_key) is the
-- idempotency scope; fingerprint is a hash of the parameters. Rows are
-- never expired automatically.
CREATE TABLE agent_operations (
  id             TEXT PRIMARY KEY,
  identity       TEXT NOT NULL,
  idem_key       TEXT NOT NULL,
  fingerprint    TEXT NOT NULL,
  package_id     TEXT NOT NULL,
  request        TEXT NOT NULL,
  state          TEXT NOT NULL,
  phase          TEXT NOT NULL,
  agent_id       TEXT NOT NULL DEFAULT '',
  workspace      TEXT NOT NULL DEFAULT '',
  error_code     TEXT NOT NULL DEFAULT '',
  error_message  TEXT NOT NULL DEFAULT '',
  guidance       TEXT NOT NULL DEFAULT '',
  doctor         TEXT NOT NULL DEFAULT '[]',
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  UNIQUE (identity, idem_key)
);
CREATE INDEX agent_operations_state ON agent_operations(state);

-- agents: a row is also the creation receipt of the operation that
-- created it (operation_id). workspace is the canonical absolute directory
-- and unique: one agent per workspace.
CREATE TABLE agents (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  package_id    TEXT NOT NULL,
  engine        TEXT NOT NULL,
  project_id    TEXT NOT NULL,
  workspace     TEXT NOT NULL UNIQUE,
  operation_id  TEXT NOT NULL UNIQUE,
  created_at    BIGINT NOT NULL
);
CREATE INDEX agents_package ON agents(package_id, created_at);

-- agent_turns are the durable receipts of turn.send: one per (identity,
-- idem_key), with the mission it created once known.
CREATE TABLE agent_turns (
  id             TEXT PRIMARY KEY,
  identity       TEXT NOT NULL,
  idem_key       TEXT NOT NULL,
  fingerprint    TEXT NOT NULL,
  agent_id       TEXT NOT NULL,
  mission_id     TEXT NOT NULL DEFAULT '',
  state          TEXT NOT NULL,
  error_code     TEXT NOT NULL DEFAULT '',
  error_message  TEXT NOT NULL DEFAULT '',
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  UNIQUE (identity, idem_key)
);
