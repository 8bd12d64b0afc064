package provider_test

import (
	"testing"

	"github.com/aos-run/aos/internal/provider"
)

func TestParseLocalPrices(t *testing.T) {
	t.Parallel()
	ms, err := provider.ParseLocalPrices(" qwen3-coder=0.2/0.8, local:llama3=0/0 ,")
	if err != nil || len(ms) != 2 || ms[0].ID != "local:qwen3-coder" || ms[0].Price != (provider.Price{Input: 0.2, Output: 0.8}) ||
		ms[1].ID != "local:llama3" || !ms[1].Price.IsZero() || ms[0].Provider != provider.Compat {
		t.Fatalf("got %+v, %v", ms, err)
	}
	for _, bad := range []string{"qwen", "qwen=1", "=1/2", "q=a/1", "q=-1/1", "q=1/NaN", "q=1/1e9"} {
		if _, err := provider.ParseLocalPrices(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestCheckLocalBaseURL(t *testing.T) {
	t.Parallel()
	for u, ok := range map[string]bool{
		"http://127.0.0.1:11434/v1": true, "https://gpu.lan:8000/v1": true, "http://[::1]:8080/v1": true,
		"ftp://h/v1": false, "http://u:p@h/v1": false, "http:///v1": false, "h:80/v1": false, "http://h/v1?k=1": false, "http://h/v1#x": false, "": false,
	} {
		if err := provider.CheckLocalBaseURL(u); (err == nil) != ok {
			t.Errorf("%q: %v", u, err)
		}
	}
}
