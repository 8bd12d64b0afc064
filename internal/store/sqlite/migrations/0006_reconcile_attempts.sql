-- Issue 11: an owner's answer "it did not run — run it" authorizes ONE
-- execution attempt. steps.attempt counts the attempts owners authorized;
-- each reconcile question belongs to one attempt (waits.attempt), so a crash
-- during an authorized attempt opens a new question instead of reusing the
-- consumed answer. SQLite cannot alter a UNIQUE constraint: waits is rebuilt.
ALTER TABLE steps ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;

CREATE TABLE waits_new (
  id          TEXT PRIMARY KEY,
  run_id      TEXT NOT NULL REFERENCES runs(id),
  mission_id  TEXT NOT NULL,
  step_seq    INTEGER NOT NULL,
  kind        TEXT NOT NULL,
  payload     TEXT NOT NULL,
  status      TEXT NOT NULL,
  resolution  TEXT,
  actor       TEXT NOT NULL DEFAULT '',
  resolve_by  INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  resolved_at INTEGER NOT NULL DEFAULT 0,
  attempt     INTEGER NOT NULL DEFAULT 0,
  UNIQUE (run_id, step_seq, attempt)
);
INSERT INTO waits_new (id, run_id, mission_id, step_seq, kind, payload, status, resolution, actor, resolve_by, created_at, resolved_at, attempt)
  SELECT id, run_id, mission_id, step_seq, kind, payload, status, resolution, actor, resolve_by, created_at, resolved_at, 0 FROM waits;
DROP TABLE waits;
ALTER TABLE waits_new RENAME TO waits;
CREATE INDEX waits_pending ON waits(status, resolve_by);
