-- Event positions: the order readers see events in, assigned after commit by
-- one sequencer at a time (see sqlstore.Dialect.Sequence). Writers no longer
-- serialize their commits to keep ids in commit order.
ALTER TABLE events ADD COLUMN pos BIGINT;
CREATE SEQUENCE event_pos_seq;
UPDATE events SET pos = id;
SELECT setval('event_pos_seq', GREATEST((SELECT MAX(id) FROM events), 1));
CREATE UNIQUE INDEX events_pos ON events(pos);
CREATE INDEX events_mission_pos ON events(mission_id, pos);
CREATE INDEX events_unsequenced ON events(id) WHERE pos IS NULL;
