-- Projects (seed 001 §8): repositories registered under the workspace root.
-- path is relative to the root and unique: two projects never share a
-- directory. Missions refer to a project by id without a foreign key, so
-- unregistering a project leaves its missions as they are.
CREATE TABLE projects (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  path        TEXT NOT NULL UNIQUE,
  mode        TEXT NOT NULL,
  origin      TEXT NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

-- The notification inbox is derived from events; only the read state is
-- stored: one row per event read one by one, and a marker below which
-- every event counts as read (POST /notifications/read {all:true}).
CREATE TABLE notification_reads (
  event_id  INTEGER PRIMARY KEY,
  read_at   INTEGER NOT NULL
);
CREATE TABLE notification_marker (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  read_through  INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
CREATE INDEX events_kind ON events(kind, id);
