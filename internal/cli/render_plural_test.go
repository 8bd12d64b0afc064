package cli

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 turns"}, {1, "1 turn"}, {2, "2 turns"}} {
		if got := plural(tc.n, "turn", "turns"); got != tc.want {
			t.Errorf("plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got := fold("a\nb\nc", 2, ""); got != "a\nb\n… (1 more line)" {
		t.Errorf("fold = %q", got)
	}
}
