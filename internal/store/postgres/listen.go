package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aos-run/aos/internal/store"
)

// maxPayload is what Publish accepts: PostgreSQL refuses NOTIFY payloads of
// 8000 bytes or more (in the server's encoding; a byte count bounds it).
const maxPayload = 7999

// subscribeBuffer is how many payloads a subscription holds for a slow
// reader before it drops.
const subscribeBuffer = 256

// MaxPayload is 7999 bytes, NOTIFY's limit.
func (s *Store) MaxPayload() int { return maxPayload }

// Publish sends payload on channel ch with pg_notify, outside any
// transaction. Any session of any role that can connect to the database
// may LISTEN on ch, so payloads must carry nothing secret.
func (s *Store) Publish(ctx context.Context, ch string, payload []byte) error {
	if err := knownChannel(ch); err != nil {
		return err
	}
	if len(payload) > maxPayload {
		return fmt.Errorf("postgres: publish %d bytes on %s: %w", len(payload), ch, store.ErrTooLarge)
	}
	if _, err := s.SQL.ExecContext(ctx, `SELECT pg_notify($1, $2)`, ch, string(payload)); err != nil {
		return fmt.Errorf("postgres: notify %s: %w", ch, err)
	}
	return nil
}

// Doorbell listens on ch with a dedicated connection, reconnecting with
// backoff when it drops (a fresh connection rings once, since notifications
// may have been missed meanwhile).
func (s *Store) Doorbell(ctx context.Context, ch string) (<-chan struct{}, error) {
	if err := knownChannel(ch); err != nil {
		return nil, err
	}
	out := make(chan struct{}, 1)
	ring := func(string) {
		select {
		case out <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(out)
		s.listenLoop(ctx, ch, nil, func() { ring("") }, ring)
	}()
	return out, nil
}

// Subscribe listens on ch with one dedicated connection and returns the
// payloads it hears, reconnecting with backoff when the connection drops
// (payloads published meanwhile are lost). It returns once LISTEN has
// succeeded on the first connection, or that connection's error.
func (s *Store) Subscribe(ctx context.Context, ch string) (<-chan []byte, error) {
	if err := knownChannel(ch); err != nil {
		return nil, err
	}
	conn, err := s.listenConn(ctx, ch)
	if err != nil {
		return nil, fmt.Errorf("postgres: subscribe %s: %w", ch, redact(err, s.url))
	}
	out := make(chan []byte, subscribeBuffer)
	deliver := func(p string) {
		select {
		case out <- []byte(p):
		default: // the reader is behind; drop rather than block the connection
		}
	}
	go func() {
		defer close(out)
		s.listenLoop(ctx, ch, conn, nil, deliver)
	}()
	return out, nil
}

// listenLoop waits for notifications on ch until ctx ends, passing each
// payload to fn. It starts on conn when that is not nil, and after each
// (re)connection calls connected when that is not nil.
func (s *Store) listenLoop(ctx context.Context, ch string, conn *pgx.Conn, connected func(), fn func(payload string)) {
	backoff := 100 * time.Millisecond
	for {
		if conn == nil {
			// Callers that must not miss anything poll behind the
			// notifications, so a gap while reconnecting is covered.
			c, err := s.listenConn(ctx, ch)
			if err == nil {
				conn = c
			}
		}
		if conn != nil {
			if connected != nil {
				connected()
			}
			for {
				n, err := conn.WaitForNotification(ctx)
				if err != nil {
					break
				}
				backoff = 100 * time.Millisecond
				fn(n.Payload)
			}
			_ = conn.Close(context.WithoutCancel(ctx))
			conn = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// listenConn opens a connection of its own (not from the pool: LISTEN is
// per session) and listens on ch.
func (s *Store) listenConn(ctx context.Context, ch string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

func knownChannel(ch string) error {
	if ch != store.ChannelEvents && ch != store.ChannelWork {
		return fmt.Errorf("postgres: unknown notification channel %q", ch)
	}
	return nil
}
