package config

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string // the variable named by the error
		check   func(t *testing.T, c Config)
	}{
		{"defaults", map[string]string{"XDG_DATA_HOME": "/x"}, "", func(t *testing.T, c Config) {
			if c.DataDir != filepath.Join("/x", "aos") || c.MaxConcurrentRuns != 4 || c.LogLevel != "info" || c.WorkspaceRoot != "/x/aos-workspaces" {
				t.Errorf("got %+v", c)
			}
		}},
		{"explicit", map[string]string{"AOS_DATA_DIR": "/d", "AOS_MAX_CONCURRENT_RUNS": "8", "AOS_DATABASE_URL": "postgres://h/db"}, "", func(t *testing.T, c Config) {
			if c.DataDir != "/d" || c.MaxConcurrentRuns != 8 || c.DatabaseURL != "postgres://h/db" {
				t.Errorf("got %+v", c)
			}
		}},
		{"bad concurrency", map[string]string{"AOS_DATA_DIR": "/d", "AOS_MAX_CONCURRENT_RUNS": "lots"}, "AOS_MAX_CONCURRENT_RUNS", nil},
		{"zero concurrency", map[string]string{"AOS_DATA_DIR": "/d", "AOS_MAX_CONCURRENT_RUNS": "0"}, "AOS_MAX_CONCURRENT_RUNS", nil},
		{"bad level", map[string]string{"AOS_DATA_DIR": "/d", "AOS_LOG_LEVEL": "loud"}, "AOS_LOG_LEVEL", nil},
		{"bad url", map[string]string{"AOS_DATA_DIR": "/d", "AOS_DATABASE_URL": "mysql://x"}, "AOS_DATABASE_URL", nil},
		{"metrics port alone binds loopback", map[string]string{"AOS_DATA_DIR": "/d", "AOS_METRICS_ADDR": ":9464"}, "", func(t *testing.T, c Config) {
			if c.MetricsAddr != "127.0.0.1:9464" {
				t.Errorf("metrics addr %q", c.MetricsAddr)
			}
		}},
		{"metrics host kept", map[string]string{"AOS_DATA_DIR": "/d", "AOS_METRICS_ADDR": "[::1]:9464"}, "", func(t *testing.T, c Config) {
			if c.MetricsAddr != "[::1]:9464" {
				t.Errorf("metrics addr %q", c.MetricsAddr)
			}
		}},
		{"no metrics by default", map[string]string{"AOS_DATA_DIR": "/d"}, "", func(t *testing.T, c Config) {
			if c.MetricsAddr != "" {
				t.Errorf("metrics addr %q", c.MetricsAddr)
			}
		}},
		{"bad metrics addr", map[string]string{"AOS_DATA_DIR": "/d", "AOS_METRICS_ADDR": "9464"}, "AOS_METRICS_ADDR", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				var ce *Error
				if !errors.As(err, &ce) || ce.Var != tc.wantErr {
					t.Fatalf("err = %v, want a config error naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}
