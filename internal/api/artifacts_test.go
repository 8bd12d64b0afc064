package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestArtifacts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		_, rid, err := b.k.CreateMission(ctx, kernel.MissionSpec{Logic: "none"})
		if err != nil {
			t.Fatal(err)
		}
		content := "<script>alert(1)</script> tool output"
		sha, _, err := b.k.PutArtifact(ctx, strings.NewReader(content), kernel.ArtifactMeta{Name: "shell-out.txt", Mime: "text/html", RunID: rid})
		if err != nil {
			t.Fatal(err)
		}
		code, body := b.do("GET", "/runs/"+rid+"/artifacts", nil, b.read)
		var list []struct{ SHA256, Name string }
		if code != 200 || json.Unmarshal(body, &list) != nil || len(list) != 1 || list[0].SHA256 != sha || list[0].Name != "shell-out.txt" {
			t.Fatalf("list = %d %s", code, body)
		}
		req, _ := http.NewRequest("GET", b.srv.URL+api.Prefix+"/artifacts/"+sha+`?name=../../etc/passwd"%0d%0aX-Evil:%201`, nil)
		req.Header.Set("Authorization", "Bearer "+b.read)
		resp, err := b.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.record(got)
		h := resp.Header
		if resp.StatusCode != 200 || string(got) != content {
			t.Fatalf("download = %d %q", resp.StatusCode, got)
		}
		// Served as an attachment that no browser renders, whatever the
		// stored type, and a hostile name cannot break the header.
		for k, want := range map[string]string{
			"Content-Type":           "application/octet-stream",
			"X-Content-Type-Options": "nosniff",
			"Content-Disposition":    `attachment; filename="_.._etc_passwd___X-Evil__1"`,
		} {
			if h.Get(k) != want {
				t.Errorf("%s = %q, want %q", k, h.Get(k), want)
			}
		}
		if h.Get("X-Evil") != "" {
			t.Error("a header was injected through the name")
		}
		for _, tc := range []struct {
			path string
			code int
		}{
			{"/artifacts/not-a-sha", 400},
			{"/artifacts/" + strings.Repeat("a", 64), 404},
			{"/artifacts/..%2f..%2fetc%2fpasswd", 400},
			{"/runs/no-such-run/artifacts", 404},
		} {
			if code, body := b.do("GET", tc.path, nil, b.read); code != tc.code {
				t.Errorf("GET %s = %d %s, want %d", tc.path, code, body, tc.code)
			}
		}
	})
}
