-- Agent operations across servers, durable revocation, paged agents
-- (issue 16).
--
-- owner is the runner id (one per aos server process) that runs an
-- operation; lease_until (ms) is how long that runner's claim holds. A
-- live runner renews the leases of all its active operations in one
-- statement; another runner's recovery takes only an operation whose lease
-- expired, by a compare-and-set claim. Rows from before this migration
-- have no owner and an expired lease.
ALTER TABLE agent_operations ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_operations ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
CREATE INDEX agent_operations_owner ON agent_operations(owner, state);

-- agent_workspace_claims serializes preparations competing for one
-- canonical workspace across every server on the database: the claim is
-- taken before the workspace is made and can be taken over only once its
-- operation is no longer accepted or running.
CREATE TABLE agent_workspace_claims (
  workspace     TEXT PRIMARY KEY,
  operation_id  TEXT NOT NULL,
  created_at    INTEGER NOT NULL
);

-- agent_revocations are identities (a device's "device:ID") whose
-- preparation and turn authorization ended; a row is never deleted.
CREATE TABLE agent_revocations (
  identity    TEXT PRIMARY KEY,
  revoked_at  INTEGER NOT NULL
);

-- Agents are listed a page at a time, oldest first.
CREATE INDEX agents_created ON agents(created_at, id);
