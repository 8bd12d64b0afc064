package cli

import (
	"errors"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/config"
)

func TestSessionTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		idle, abs time.Duration
		badVar    string
	}{
		{"unset keeps the defaults", nil, 0, 0, ""},
		{"both", map[string]string{"AOS_SESSION_IDLE": "8h", "AOS_SESSION_MAX": "72h"}, 8 * time.Hour, 72 * time.Hour, ""},
		{"idle only, within the default max", map[string]string{"AOS_SESSION_IDLE": "30m"}, 30 * time.Minute, 0, ""},
		{"not a duration", map[string]string{"AOS_SESSION_IDLE": "8"}, 0, 0, "AOS_SESSION_IDLE"},
		{"too short", map[string]string{"AOS_SESSION_MAX": "1m"}, 0, 0, "AOS_SESSION_MAX"},
		{"negative", map[string]string{"AOS_SESSION_MAX": "-10h"}, 0, 0, "AOS_SESSION_MAX"},
		{"idle above max", map[string]string{"AOS_SESSION_IDLE": "48h", "AOS_SESSION_MAX": "24h"}, 0, 0, "AOS_SESSION_IDLE"},
		{"idle above the default max", map[string]string{"AOS_SESSION_IDLE": "400h"}, 0, 0, "AOS_SESSION_IDLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idle, abs, err := sessionTimeouts(func(k string) string { return tc.env[k] })
			var ce *config.Error
			if tc.badVar != "" {
				if !errors.As(err, &ce) || ce.Var != tc.badVar {
					t.Fatalf("err = %v, want a config error on %s", err, tc.badVar)
				}
				return
			}
			if err != nil || idle != tc.idle || abs != tc.abs {
				t.Fatalf("got %v %v %v, want %v %v", idle, abs, err, tc.idle, tc.abs)
			}
		})
	}
}
