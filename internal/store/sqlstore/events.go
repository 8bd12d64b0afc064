package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

// eventCols selects an event with its cursor position as its id.
func (q *queries) eventCols() string {
	return q.d.EventPos + `, mission_id, run_id, seq, kind, payload, trust, created_at`
}

// sequence assigns positions to committed events that have none.
func (q *queries) sequence(ctx context.Context) error {
	if q.d.Sequence == "" {
		return nil
	}
	if _, err := q.q.ExecContext(ctx, q.d.Sequence); err != nil {
		return fmt.Errorf("sequence events: %w", err)
	}
	return nil
}

func (q *queries) InsertEvent(ctx context.Context, e store.Event) (int64, error) {
	args := eventArgs(e)
	var id int64
	err := q.q.QueryRowContext(ctx, `INSERT INTO events (`+eventInsertCols+`) VALUES (`+placeholders(1, len(args))+`) RETURNING id`, args...).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert event: %w", err)
	}
	return id, nil
}

func (q *queries) InsertEvents(ctx context.Context, es []store.Event) error {
	for len(es) > 0 {
		n := min(len(es), store.MaxEventsPerInsert)
		values, args := eventValues(es[:n], nil)
		if _, err := q.q.ExecContext(ctx, `INSERT INTO events (`+eventInsertCols+`) VALUES `+values, args...); err != nil {
			return fmt.Errorf("insert %d events: %w", n, err)
		}
		es = es[n:]
	}
	return nil
}

// eventValues returns the rows of a VALUES list inserting es with
// eventInsertCols, whose parameters follow args, and args with theirs
// appended. Rows of one VALUES list draw their ids in list order.
func eventValues(es []store.Event, args []any) (string, []any) {
	return valuesRows(len(es), eventInsertArity, args, func(i int, args []any) []any { return append(args, eventArgs(es[i])...) })
}

// valuesRows returns a VALUES list of n rows of arity parameters each,
// numbered after args, and args with each row's values appended by add.
func valuesRows(n, arity int, args []any, add func(i int, args []any) []any) (string, []any) {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(" + placeholders(len(args)+1, arity) + ")")
		args = add(i, args)
	}
	return b.String(), args
}

// eventInsertArity is the number of eventInsertCols.
const eventInsertArity = 7

// eventInsertCols are the columns an event is inserted with (its id is
// drawn by the database).
const eventInsertCols = `mission_id, run_id, seq, kind, payload, trust, created_at`

// eventArgs are e's values in eventInsertCols' order.
func eventArgs(e store.Event) []any {
	trust := e.Trust
	if trust == "" {
		trust = "system"
	}
	var seq any
	if e.Seq != nil {
		seq = *e.Seq
	}
	return []any{e.MissionID, e.RunID, seq, e.Kind, string(e.Payload), trust, e.CreatedAt}
}

func (q *queries) ListEvents(ctx context.Context, p store.ListEventsParams) ([]store.Event, error) {
	limit := p.Limit
	if limit <= 0 || limit > 10000 {
		limit = 10000
	}
	var rows *sql.Rows
	var err error
	if err := q.sequence(ctx); err != nil {
		return nil, err
	}
	pos := q.d.EventPos
	if p.MissionID != "" {
		rows, err = q.q.QueryContext(ctx, `SELECT `+q.eventCols()+` FROM events WHERE mission_id = $1 AND `+pos+` > $2 ORDER BY `+pos+` LIMIT $3`, p.MissionID, p.After, limit)
	} else {
		rows, err = q.q.QueryContext(ctx, `SELECT `+q.eventCols()+` FROM events WHERE `+pos+` > $1 ORDER BY `+pos+` LIMIT $2`, p.After, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		var e store.Event
		var seq sql.NullInt64
		var payload string
		if err := rows.Scan(&e.ID, &e.MissionID, &e.RunID, &seq, &e.Kind, &payload, &e.Trust, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		if seq.Valid {
			s := int(seq.Int64)
			e.Seq = &s
		}
		e.Payload = []byte(payload)
		out = append(out, e)
	}
	return out, rows.Err()
}

func (q *queries) LatestEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := q.sequence(ctx); err != nil {
		return 0, err
	}
	if err := q.q.QueryRowContext(ctx, `SELECT MAX(`+q.d.EventPos+`) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("latest event id: %w", err)
	}
	return id.Int64, nil
}
