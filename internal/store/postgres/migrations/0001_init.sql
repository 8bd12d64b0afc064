-- aos schema, PostgreSQL dialect. Times are Unix milliseconds; JSON is TEXT.
CREATE TABLE missions (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL DEFAULT '',
  title       TEXT NOT NULL DEFAULT '',
  spec        TEXT NOT NULL DEFAULT '{}',
  status      TEXT NOT NULL,
  root_run_id TEXT NOT NULL,
  spent_usd   DOUBLE PRECISION NOT NULL DEFAULT 0,
  result      TEXT,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  ended_at    BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX missions_status ON missions(status, created_at);

CREATE TABLE runs (
  id               TEXT PRIMARY KEY,
  mission_id       TEXT NOT NULL REFERENCES missions(id),
  parent_run_id    TEXT NOT NULL DEFAULT '',
  logic            TEXT NOT NULL,
  input            TEXT NOT NULL DEFAULT '{}',
  status           TEXT NOT NULL,
  next_seq         BIGINT NOT NULL DEFAULT 0,
  lease_owner      TEXT NOT NULL DEFAULT '',
  lease_expires_at BIGINT NOT NULL DEFAULT 0,
  fencing_token    BIGINT NOT NULL DEFAULT 0,
  wake_at          BIGINT NOT NULL DEFAULT 0,
  cancel_requested BIGINT NOT NULL DEFAULT 0,
  budget_usd       DOUBLE PRECISION NOT NULL DEFAULT 0,
  budget_turns     BIGINT NOT NULL DEFAULT 0,
  budget_wall_sec  BIGINT NOT NULL DEFAULT 0,
  usage            TEXT NOT NULL DEFAULT '{}',
  spent_usd        DOUBLE PRECISION NOT NULL DEFAULT 0,
  turns            BIGINT NOT NULL DEFAULT 0,
  result           TEXT,
  error            TEXT NOT NULL DEFAULT '',
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  started_at       BIGINT NOT NULL DEFAULT 0,
  ended_at         BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_claim ON runs(status, created_at);
CREATE INDEX runs_mission ON runs(mission_id);
CREATE INDEX runs_parent ON runs(parent_run_id);

CREATE TABLE steps (
  run_id       TEXT NOT NULL REFERENCES runs(id),
  seq          BIGINT NOT NULL,
  kind         TEXT NOT NULL,
  name         TEXT NOT NULL,
  effect       TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  request      TEXT NOT NULL,
  status       TEXT NOT NULL,
  idem_key     TEXT NOT NULL,
  result       TEXT,
  error        TEXT,
  usage        TEXT,
  cost_usd     DOUBLE PRECISION NOT NULL DEFAULT 0,
  wake_at      BIGINT NOT NULL DEFAULT 0,
  started_at   BIGINT NOT NULL,
  ended_at     BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE waits (
  id          TEXT PRIMARY KEY,
  run_id      TEXT NOT NULL REFERENCES runs(id),
  mission_id  TEXT NOT NULL,
  step_seq    BIGINT NOT NULL,
  kind        TEXT NOT NULL,
  payload     TEXT NOT NULL,
  status      TEXT NOT NULL,
  resolution  TEXT,
  actor       TEXT NOT NULL DEFAULT '',
  resolve_by  BIGINT NOT NULL DEFAULT 0,
  created_at  BIGINT NOT NULL,
  resolved_at BIGINT NOT NULL DEFAULT 0,
  UNIQUE (run_id, step_seq)
);
CREATE INDEX waits_pending ON waits(status, resolve_by);

CREATE TABLE events (
  id         BIGSERIAL PRIMARY KEY,
  mission_id TEXT NOT NULL,
  run_id     TEXT NOT NULL,
  seq        BIGINT,
  kind       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  trust      TEXT NOT NULL DEFAULT 'system',
  created_at BIGINT NOT NULL
);
CREATE INDEX events_mission ON events(mission_id, id);

CREATE TABLE owner_messages (
  id         BIGSERIAL PRIMARY KEY,
  run_id     TEXT NOT NULL REFERENCES runs(id),
  text       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX owner_messages_run ON owner_messages(run_id, id);

CREATE TABLE artifacts (
  sha256     TEXT NOT NULL,
  name       TEXT NOT NULL,
  mime       TEXT NOT NULL,
  size       BIGINT NOT NULL,
  run_id     TEXT NOT NULL,
  step_seq   BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (sha256, run_id, name)
);
CREATE INDEX artifacts_run ON artifacts(run_id);

CREATE TABLE spend_days (
  day TEXT PRIMARY KEY,
  usd DOUBLE PRECISION NOT NULL DEFAULT 0
);

CREATE TABLE workers (
  id         TEXT PRIMARY KEY,
  version    TEXT NOT NULL,
  hostname   TEXT NOT NULL,
  started_at BIGINT NOT NULL,
  last_seen  BIGINT NOT NULL
);

CREATE TABLE model_prices (
  model                 TEXT PRIMARY KEY,
  provider              TEXT NOT NULL,
  input_per_mtok        DOUBLE PRECISION NOT NULL,
  output_per_mtok       DOUBLE PRECISION NOT NULL,
  cache_read_per_mtok   DOUBLE PRECISION NOT NULL,
  cache_write_per_mtok  DOUBLE PRECISION NOT NULL,
  context_window        BIGINT NOT NULL,
  updated_at            BIGINT NOT NULL
);

CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
