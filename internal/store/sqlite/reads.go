package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/sqlstore"
)

// Reads that serve the API (listings, replays, the token check every
// request makes) go through a second pool of read-only connections, not
// the single write connection: in WAL mode a reader never waits for the
// writer, so GET /missions or a WebSocket replay no longer queues behind
// the step commits of every running mission (and their fsyncs), and a
// mission's creation no longer queues behind the reads of 20 watchers.
// Each read is its own autocommit transaction, which sees every
// transaction committed before it began: a read after a write returns
// still sees the write. The kernel's own reads (steps of a run being
// replayed, waits, fences) keep to the write connection and its order.
//
//   - query_only(1): a read connection can never write, even by mistake.
//   - busy_timeout(10000): a reader can still meet SQLITE_BUSY briefly
//     while another process recovers the WAL or truncates it.
//   - readPoolSize connections: enough for a few concurrent listings and
//     replays on a 2-core machine; more would only contend for the CPU.
const readPoolSize = 4

func openReads(ctx context.Context, abs string) (*sqlstore.DB, error) {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "query_only(1)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+abs+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open read pool: %w", err)
	}
	db.SetMaxOpenConns(readPoolSize)
	db.SetMaxIdleConns(readPoolSize)
	db.SetConnMaxLifetime(0)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite: open read pool on %s: %w", abs, err)
	}
	return sqlstore.New(db, sqlstore.Dialect{Name: "sqlite", EventPos: "id", Transient: transient}), nil
}

// GetMission reads through the read pool.
func (s *Store) GetMission(ctx context.Context, id string) (store.Mission, error) {
	return s.reads.GetMission(ctx, id)
}

// ListMissions reads through the read pool.
func (s *Store) ListMissions(ctx context.Context, p store.ListMissionsParams) ([]store.Mission, error) {
	return s.reads.ListMissions(ctx, p)
}

// ListRunsByMission reads through the read pool.
func (s *Store) ListRunsByMission(ctx context.Context, missionID string) ([]store.Run, error) {
	return s.reads.ListRunsByMission(ctx, missionID)
}

// ListSteps reads through the read pool.
func (s *Store) ListSteps(ctx context.Context, runID string, afterSeq, limit int) ([]store.Step, error) {
	return s.reads.ListSteps(ctx, runID, afterSeq, limit)
}

// ListWaits reads through the read pool.
func (s *Store) ListWaits(ctx context.Context, p store.ListWaitsParams) ([]store.Wait, error) {
	return s.reads.ListWaits(ctx, p)
}

// ListEvents reads through the read pool. SQLite's single writer commits
// event ids in order, so a reader's snapshot never has a gap below its
// highest id.
func (s *Store) ListEvents(ctx context.Context, p store.ListEventsParams) ([]store.Event, error) {
	return s.reads.ListEvents(ctx, p)
}

// LatestEventID reads through the read pool.
func (s *Store) LatestEventID(ctx context.Context) (int64, error) {
	return s.reads.LatestEventID(ctx)
}

// ListArtifacts reads through the read pool.
func (s *Store) ListArtifacts(ctx context.Context, runID string) ([]store.Artifact, error) {
	return s.reads.ListArtifacts(ctx, runID)
}

// GetSpend reads through the read pool.
func (s *Store) GetSpend(ctx context.Context, day string) (float64, error) {
	return s.reads.GetSpend(ctx, day)
}

// GetSetting reads through the read pool.
func (s *Store) GetSetting(ctx context.Context, key string) ([]byte, error) {
	return s.reads.GetSetting(ctx, key)
}

// GetAPITokenByHash reads through the read pool: every API request checks
// its token, and a revocation committed before the request is seen.
func (s *Store) GetAPITokenByHash(ctx context.Context, hash string) (store.APIToken, error) {
	return s.reads.GetAPITokenByHash(ctx, hash)
}

// ListAPITokens reads through the read pool.
func (s *Store) ListAPITokens(ctx context.Context) ([]store.APIToken, error) {
	return s.reads.ListAPITokens(ctx)
}
