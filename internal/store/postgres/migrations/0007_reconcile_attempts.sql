-- Issue 11: an owner's answer "it did not run — run it" authorizes ONE
-- execution attempt. steps.attempt counts the attempts owners authorized;
-- each reconcile question belongs to one attempt (waits.attempt), so a crash
-- during an authorized attempt opens a new question instead of reusing the
-- consumed answer.
ALTER TABLE steps ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE waits ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE waits DROP CONSTRAINT waits_run_id_step_seq_key;
ALTER TABLE waits ADD CONSTRAINT waits_run_step_attempt_key UNIQUE (run_id, step_seq, attempt);
