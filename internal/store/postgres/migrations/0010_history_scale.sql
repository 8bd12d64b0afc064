-- Issue 17: reads that stay flat as history grows, and retention.
-- GET /missions pages by created_at DESC, id: without an index in that
-- order every page scanned and sorted the whole table (bench/scale).
CREATE INDEX missions_created ON missions(created_at DESC, id);
DROP INDEX missions_status;
CREATE INDEX missions_status ON missions(status, created_at DESC, id);
-- Retention finds missions ended before a cutoff, then their audit entries.
CREATE INDEX missions_ended ON missions(ended_at) WHERE ended_at > 0;
CREATE INDEX audit_target ON audit_log(target, id);
-- What retention removed, so that a cursor before it gets a typed
-- "resync" answer instead of a silent gap: per mission, the highest event
-- position pruned; and, under name 'events', the highest over all.
CREATE TABLE pruned_missions (
  mission_id     TEXT PRIMARY KEY,
  events_through BIGINT NOT NULL DEFAULT 0,
  pruned_at      BIGINT NOT NULL
);
CREATE TABLE retention_marks (
  name TEXT PRIMARY KEY,
  pos  BIGINT NOT NULL
);
