package mission_test

import (
	"testing"

	"github.com/aos-run/aos/internal/mission"
)

func TestPrincipal(t *testing.T) {
	tok := mission.Principal{TokenID: "tok_1", Scopes: []string{"write"}}
	ses := mission.Principal{SessionID: "abc", Scopes: mission.SessionScopes()}
	for _, c := range []struct {
		p     mission.Principal
		actor mission.Actor
		can   map[string]bool
	}{
		{tok, "token:tok_1", map[string]bool{"read": true, "write": true, "owner": false}},
		{mission.Principal{TokenID: "tok_2", Scopes: []string{"read"}}, "token:tok_2", map[string]bool{"read": true, "write": false, "owner": false}},
		{ses, "session:abc", map[string]bool{"read": true, "write": true, "owner": true}},
	} {
		if c.p.Actor() != c.actor {
			t.Errorf("actor %q, want %q", c.p.Actor(), c.actor)
		}
		for sc, want := range c.can {
			if c.p.Can(sc) != want {
				t.Errorf("%s can %s = %v, want %v", c.actor, sc, !want, want)
			}
		}
	}
}
