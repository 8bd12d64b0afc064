-- Console reveals of prepared agents (seed 000's "Desktop reveal after
-- preparation", mapped onto the owner's console: docs/AGENTS.md).
--
-- A row is written as soon as a preparation's creation yields an agent:
-- the reveal is pending while opened_at is 0; the console's
-- acknowledgement (POST /operations/{id}/opened) sets opened_at once and
-- never again. One row per operation; rows are never expired
-- automatically, like the rest of the preparation journal.
CREATE TABLE agent_reveals (
  operation_id  TEXT PRIMARY KEY,
  agent_id      TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  opened_at     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX agent_reveals_pending ON agent_reveals(opened_at, created_at);
