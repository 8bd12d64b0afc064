-- Owner policy rules (seed 001 §6): deny > ask > allow, project or global.
CREATE TABLE policy_rules (
  id             TEXT PRIMARY KEY,
  project_id     TEXT NOT NULL DEFAULT '',
  tool           TEXT NOT NULL,
  command_prefix TEXT NOT NULL DEFAULT '',
  decision       TEXT NOT NULL,
  note           TEXT NOT NULL DEFAULT '',
  created_at     BIGINT NOT NULL
);
CREATE INDEX policy_rules_project ON policy_rules(project_id);
