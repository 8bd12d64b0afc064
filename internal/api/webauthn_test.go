package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/aos-run/aos/internal/store/storetest"
)

var b64u = base64.RawURLEncoding

// softAuthenticator is a software WebAuthn authenticator: one ECDSA P-256
// credential, "none" attestation, a sign count that goes up on each use.
type softAuthenticator struct {
	t      *testing.T
	key    *ecdsa.PrivateKey
	id     []byte
	count  uint32
	rpID   string
	origin string
}

func newSoftAuthenticator(t *testing.T, rpID, origin string) *softAuthenticator {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return &softAuthenticator{t: t, key: key, id: id, rpID: rpID, origin: origin}
}

// authData is the authenticator data: rpIdHash, flags, sign count and,
// when attested, the credential.
func (a *softAuthenticator) authData(flags byte, attested []byte) []byte {
	h := sha256.Sum256([]byte(a.rpID))
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, a.count)
	return append(out, attested...)
}

func (a *softAuthenticator) clientData(typ, challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return b
}

// create answers navigator.credentials.create for challenge.
func (a *softAuthenticator) create(challenge string) []byte {
	pub, err := a.key.PublicKey.Bytes() // 0x04 | X | Y
	if err != nil {
		a.t.Fatal(err)
	}
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: pub[1:33], -3: pub[33:]})
	if err != nil {
		a.t.Fatal(err)
	}
	att := make([]byte, 16) // AAGUID: zeros
	att = binary.BigEndian.AppendUint16(att, uint16(len(a.id)))
	att = append(append(att, a.id...), cose...)
	obj, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(0x45, att)}) // UP|UV|AT
	if err != nil {
		a.t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"id": b64u.EncodeToString(a.id), "rawId": b64u.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64u.EncodeToString(a.clientData("webauthn.create", challenge)), "attestationObject": b64u.EncodeToString(obj)}})
	return b
}

// get answers navigator.credentials.get for challenge.
func (a *softAuthenticator) get(challenge string, tamper bool) []byte {
	a.count++
	ad := a.authData(0x05, nil) // UP|UV
	cd := a.clientData("webauthn.get", challenge)
	cdh := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte(nil), ad...), cdh[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		a.t.Fatal(err)
	}
	if tamper {
		sig[len(sig)-1] ^= 1
	}
	b, _ := json.Marshal(map[string]any{"id": b64u.EncodeToString(a.id), "rawId": b64u.EncodeToString(a.id), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64u.EncodeToString(cd), "authenticatorData": b64u.EncodeToString(ad), "signature": b64u.EncodeToString(sig)}})
	return b
}

// challengeOf reads publicKey.challenge (and rp id) from begin's answer.
func challengeOf(t *testing.T, body []byte) (challenge, rpID string) {
	t.Helper()
	var o struct {
		PublicKey struct {
			Challenge string
			RP        struct{ ID string } `json:"rp"`
			RPID      string              `json:"rpId"`
		}
	}
	if err := json.Unmarshal(body, &o); err != nil || o.PublicKey.Challenge == "" {
		t.Fatalf("no challenge in %s", body)
	}
	return o.PublicKey.Challenge, o.PublicKey.RP.ID + o.PublicKey.RPID
}

// TestWebAuthnEndToEnd registers a passkey with a software authenticator
// over the API, logs in with it, and refuses a replayed registration, a
// bad signature and a token-authenticated registration.
func TestWebAuthnEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		o := b.setUpOwner()
		u, _ := url.Parse(b.origin)
		sa := newSoftAuthenticator(t, u.Hostname(), b.origin)

		if status, _ := b.do("POST", "/auth/webauthn/login/begin", nil, ""); status != 409 {
			t.Fatalf("login begin without passkeys: %d", status)
		}
		if status, _ := b.do("POST", "/auth/webauthn/register/begin", nil, b.write); status != 403 {
			t.Fatalf("register begin with a token: %d", status)
		}
		status, body := b.doCookie("POST", "/auth/webauthn/register/begin", nil, o.sid, o.csrf)
		if status != 200 {
			t.Fatalf("register begin: %d %s", status, body)
		}
		ch, rp := challengeOf(t, body)
		if rp != "localhost" {
			t.Fatalf("rp id %q, want localhost", rp)
		}
		cred := sa.create(ch)
		// Without CSRF the finish is refused and the ceremony survives.
		if status, _ := b.doCookie("POST", "/auth/webauthn/register/finish?name=laptop", cred, o.sid, ""); status != 403 {
			t.Fatalf("finish without csrf: %d", status)
		}
		status, body = b.doCookie("POST", "/auth/webauthn/register/finish?name=laptop", cred, o.sid, o.csrf)
		var pk struct {
			ID, Name  string
			CreatedAt int64
		}
		if err := json.Unmarshal(body, &pk); err != nil || status != 201 || pk.ID != b64u.EncodeToString(sa.id) || pk.Name != "laptop" || pk.CreatedAt == 0 {
			t.Fatalf("register finish: %d %s", status, body)
		}
		if status, _ := b.doCookie("POST", "/auth/webauthn/register/finish", cred, o.sid, o.csrf); status != 401 {
			t.Fatalf("replayed registration: %d, want 401", status)
		}
		status, body = b.doCookie("GET", "/auth/webauthn/credentials", nil, o.sid, "")
		if status != 200 || !strings.Contains(string(body), pk.ID) || strings.Contains(string(body), "publicKey") {
			t.Fatalf("credentials: %d %s", status, body)
		}

		login := func(tamper bool) *http.Response {
			t.Helper()
			status, body := b.do("POST", "/auth/webauthn/login/begin", nil, "")
			if status != 200 {
				t.Fatalf("login begin: %d %s", status, body)
			}
			ch, _ := challengeOf(t, body)
			resp, _ := b.send("POST", "/auth/webauthn/login/finish", sa.get(ch, tamper), nil, true)
			return resp
		}
		if resp := login(true); resp.StatusCode != 401 || cookieOf(resp) != nil {
			t.Fatalf("bad signature: %d", resp.StatusCode)
		}
		resp := login(false)
		c := cookieOf(resp)
		if resp.StatusCode != 200 || c == nil || c.Name != "aos_sid" || !c.HttpOnly {
			t.Fatalf("passkey login: %d %v", resp.StatusCode, resp.Header["Set-Cookie"])
		}
		b.secret(c.Value)
		if status, _ := b.doCookie("GET", "/missions", nil, c.Value, ""); status != 200 {
			t.Fatalf("the passkey session: %d", status)
		}
		if status, _ := b.doCookie("DELETE", "/auth/webauthn/credentials/"+pk.ID, nil, o.sid, o.csrf); status != 204 {
			t.Fatalf("delete passkey: %d", status)
		}
		if status, _ := b.do("POST", "/auth/webauthn/login/begin", nil, ""); status != 409 {
			t.Fatalf("login begin after delete: %d", status)
		}
		_, body = b.doCookie("GET", "/system/audit", nil, o.sid, "")
		for _, a := range []string{`"passkey.add"`, `"passkey.remove"`, `"method":"passkey"`} {
			if !strings.Contains(string(body), a) {
				t.Fatalf("audit lacks %s: %s", a, body)
			}
		}
	})
}
