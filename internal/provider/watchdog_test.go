package provider_test

import (
	"context"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
)

func TestWatchdog(t *testing.T) {
	t.Parallel()
	ctx, wd, cancel := provider.StartWatchdog(context.Background(), 400*time.Millisecond)
	defer cancel()
	// Kicked more often than the timeout, it never fires.
	deadline := time.Now().Add(600 * time.Millisecond)
	for time.Now().Before(deadline) {
		wd.Kick()
		select {
		case <-ctx.Done():
			t.Fatal("fired while kicked")
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("did not fire")
	}
	if err := wd.Err(provider.OpenAI); err == nil {
		t.Error("no error after firing")
	}
	_, wd2, cancel2 := provider.StartWatchdog(context.Background(), -1)
	cancel2()
	if wd2.Err(provider.OpenAI) != nil {
		t.Error("disabled watchdog fired")
	}
}
