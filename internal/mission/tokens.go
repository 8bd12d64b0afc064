package mission

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/store"
)

// TokenPrefix starts every API token, so a leaked one is recognisable.
const TokenPrefix = "aos_"

// Scopes a credential can hold. Write implies read. Owner (managing API
// tokens) is held only by an owner's browser session, never by a token.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
	ScopeOwner = "owner"
)

// Token is an API token's record, never the token itself.
type Token struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	CreatedAt int64    `json:"createdAt"`
	RevokedAt int64    `json:"revokedAt,omitempty"`
}

// NewToken is a token just created: Secret is shown this once and stored
// only as its SHA-256.
type NewToken struct {
	Token
	Secret string `json:"token"`
}

// Principal is who a valid credential belongs to: an API token (TokenID)
// or an owner session (SessionID, its public id).
type Principal struct {
	TokenID   string
	SessionID string
	Scopes    []string
}

// SessionScopes returns the scopes of an owner session.
func SessionScopes() []string { return []string{ScopeRead, ScopeWrite, ScopeOwner} }

// Actor names the principal in the audit log: "session:<public id>" or
// "token:<id>".
func (p Principal) Actor() Actor {
	if p.SessionID != "" {
		return Actor("session:" + p.SessionID)
	}
	return Actor("token:" + p.TokenID)
}

// Can reports whether the principal holds scope (write implies read).
func (p Principal) Can(scope string) bool {
	return slices.Contains(p.Scopes, scope) || scope == ScopeRead && slices.Contains(p.Scopes, ScopeWrite)
}

func hashToken(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// secretLen is the length of TokenPrefix + 32 random bytes, base64url.
var secretLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(32)

// CreateToken creates a token with the given scopes (read, write).
func (s *Service) CreateToken(ctx context.Context, actor Actor, name string, scopes []string) (NewToken, error) {
	// A control character (ESC above all) would drive the terminal that
	// runs aos token ls.
	if len(name) > 100 || !utf8.ValidString(name) || strings.ContainsFunc(name, invisible) {
		return NewToken{}, invalid("name must be at most 100 bytes of UTF-8 text without control or format characters")
	}
	if len(scopes) == 0 {
		return NewToken{}, invalid("a token needs at least one scope (read, write)")
	}
	for _, sc := range scopes {
		if sc != ScopeRead && sc != ScopeWrite {
			return NewToken{}, invalid("unknown scope %q (want read or write)", sc)
		}
	}
	scopes = slices.Compact(slices.Sorted(slices.Values(scopes)))
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return NewToken{}, err
	}
	var idb [6]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return NewToken{}, err
	}
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	t := store.APIToken{ID: "tok_" + hex.EncodeToString(idb[:]), Name: name, Hash: hashToken(secret), Scopes: strings.Join(scopes, " "),
		CreatedAt: s.now().UnixMilli()}
	if err := s.st.InsertAPIToken(ctx, t); err != nil {
		return NewToken{}, translate("create token", err)
	}
	s.audit(ctx, actor, "token.create", t.ID, map[string]any{"name": name, "scopes": scopes})
	return NewToken{Token: tokenView(t), Secret: secret}, nil
}

func tokenView(t store.APIToken) Token {
	return Token{ID: t.ID, Name: t.Name, Scopes: strings.Fields(t.Scopes), CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt}
}

// ListTokens returns every token's record, oldest first.
func (s *Service) ListTokens(ctx context.Context) ([]Token, error) {
	ts, err := s.st.ListAPITokens(ctx)
	if err != nil {
		return nil, translate("list tokens", err)
	}
	out := make([]Token, 0, len(ts))
	for _, t := range ts {
		out = append(out, tokenView(t))
	}
	return out, nil
}

// RevokeToken revokes a live token; its next request is refused.
func (s *Service) RevokeToken(ctx context.Context, actor Actor, id string) error {
	if err := s.st.RevokeAPIToken(ctx, id, s.now().UnixMilli()); err != nil {
		return translate("revoke token", err)
	}
	s.audit(ctx, actor, "token.revoke", id, nil)
	return nil
}

// Authenticate returns the principal of a live token. Anything else is
// ErrUnauthorized, with no hint of why.
func (s *Service) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if len(secret) != secretLen || !strings.HasPrefix(secret, TokenPrefix) {
		return Principal{}, ErrUnauthorized
	}
	t, err := s.st.GetAPITokenByHash(ctx, hashToken(secret))
	if errors.Is(err, store.ErrNotFound) || err == nil && t.RevokedAt != 0 {
		return Principal{}, ErrUnauthorized
	}
	if err != nil {
		return Principal{}, translate("authenticate", err)
	}
	return Principal{TokenID: t.ID, Scopes: strings.Fields(t.Scopes)}, nil
}

// invisible reports a rune that may not appear in a name shown in a
// terminal: a control character (it could drive the terminal) or a format
// character such as U+202E RIGHT-TO-LEFT OVERRIDE (it could make a name
// read as another).
func invisible(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }
