package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/config"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "aos test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestServerTLSConfig(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t)
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantTLS bool
		wantErr bool
	}{
		{"unset", nil, false, false},
		{"both", map[string]string{"AOS_TLS_CERT": certFile, "AOS_TLS_KEY": keyFile}, true, false},
		{"cert alone", map[string]string{"AOS_TLS_CERT": certFile}, false, true},
		{"key alone", map[string]string{"AOS_TLS_KEY": keyFile}, false, true},
		{"swapped", map[string]string{"AOS_TLS_CERT": keyFile, "AOS_TLS_KEY": certFile}, false, true},
		{"missing file", map[string]string{"AOS_TLS_CERT": certFile, "AOS_TLS_KEY": keyFile + ".nope"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := serverTLS(func(k string) string { return tc.env[k] })
			var ce *config.Error
			if tc.wantErr != errors.As(err, &ce) || (cfg != nil) != tc.wantTLS {
				t.Fatalf("cfg %v err %v", cfg != nil, err)
			}
			if cfg != nil && cfg.MinVersion != tls.VersionTLS12 {
				t.Fatalf("MinVersion %x", cfg.MinVersion)
			}
		})
	}
}

func TestPlainHTTPWarning(t *testing.T) {
	for _, tc := range []struct {
		addr, scheme, origin string
		warn                 bool
	}{
		{"127.0.0.1:8640", "http", "http://127.0.0.1:8640", false},
		{"[::1]:8640", "http", "", false},
		{"localhost:8640", "http", "", false},
		{"0.0.0.0:8640", "http", "http://0.0.0.0:8640", true},
		{"192.168.1.5:8640", "http", "http://192.168.1.5:8640", true},
		{"[::]:8640", "http", "", true},
		{"0.0.0.0:8640", "https", "https://aos.example", false},
		{"0.0.0.0:8640", "http", "https://aos.example", false}, // a TLS proxy in front
	} {
		if got := plainHTTPWarning(tc.addr, tc.scheme, tc.origin) != ""; got != tc.warn {
			t.Errorf("%s %s %s: warn %v, want %v", tc.addr, tc.scheme, tc.origin, got, tc.warn)
		}
	}
}

// TestServerServesTLS: with AOS_TLS_CERT and AOS_TLS_KEY, aos server speaks
// HTTPS only, says so in its banner, and the owner's session cookie is the
// Secure __Host- one.
func TestServerServesTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	dir := t.TempDir()
	_, out := startServer(t, mapEnv(map[string]string{"AOS_DATA_DIR": dir + "/data", "AOS_WORKSPACE_ROOT": dir + "/ws", "XDG_CONFIG_HOME": dir + "/config",
		"AOS_ADDR": "127.0.0.1:0", "AOS_TLS_CERT": certFile, "AOS_TLS_KEY": keyFile}))
	tokRe := regexp.MustCompile(`setup token: (aos_setup_\S+)`)
	urlRe := regexp.MustCompile(`https://(\S+)/api/v1`)
	for deadline := time.Now().Add(10 * time.Second); tokRe.FindString(out.String()) == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no https banner and setup token:\n%s", out.String())
		}
	}
	m := urlRe.FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "aos setup --server https://") {
		t.Fatalf("banner:\n%s", out.String())
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	base := "https://" + m[1] + "/api/v1"
	resp, err := hc.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("health over https: %d", resp.StatusCode)
	}
	// Plain HTTP on the same port is not served.
	if resp, err := http.Get("http://" + m[1] + "/api/v1/health"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP answered 200 on the TLS port")
		}
	}
	// The owner's first run over https: the session cookie is the Secure
	// __Host- one.
	tok := tokRe.FindStringSubmatch(out.String())[1]
	resp, err = hc.Post(base+"/auth/setup/begin", "application/json", strings.NewReader(`{"setupToken":"`+tok+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var begin struct {
		TOTPSecret string `json:"totpSecret"`
	}
	err = json.NewDecoder(resp.Body).Decode(&begin)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("setup begin over https: %d %v", resp.StatusCode, err)
	}
	body := `{"setupToken":"` + tok + `","password":"a long enough passphrase","totpCode":"` + totpAt(t, begin.TOTPSecret, time.Now()) + `"}`
	resp, err = hc.Post(base+"/auth/setup/complete", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != 200 || len(cookies) != 1 || cookies[0].Name != "__Host-aos_sid" || !cookies[0].Secure || !cookies[0].HttpOnly {
		t.Fatalf("setup complete over https: %d, cookies %+v", resp.StatusCode, cookies)
	}
}
