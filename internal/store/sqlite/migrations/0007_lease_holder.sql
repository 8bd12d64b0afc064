-- Issue 11: who holds a run's lease, so that a worker on the same machine can
-- take over at once from a holder that provably died (kill -9) instead of
-- waiting out the lease. lease_proc identifies the process beyond its pid:
-- boot id, pid namespace and start time (store.LeaseHolder).
ALTER TABLE runs ADD COLUMN lease_host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lease_pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN lease_proc TEXT NOT NULL DEFAULT '';
