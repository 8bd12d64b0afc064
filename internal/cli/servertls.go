package cli

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"

	"github.com/aos-run/aos/internal/config"
)

// serverTLS reads AOS_TLS_CERT and AOS_TLS_KEY (PEM files): both set serve
// HTTPS, both unset plain HTTP, one alone is a config error. The files are
// loaded now, so a bad pair stops the server at start, not at the first
// handshake.
func serverTLS(getenv func(string) string) (*tls.Config, error) {
	certFile, keyFile := getenv("AOS_TLS_CERT"), getenv("AOS_TLS_KEY")
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, &config.Error{Var: "AOS_TLS_CERT", Msg: "AOS_TLS_CERT and AOS_TLS_KEY go together"}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, &config.Error{Var: "AOS_TLS_CERT", Msg: "cannot load the certificate and key: " + err.Error()}
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// scheme is "https" when AOS_TLS_CERT is set, else "http".
func scheme(getenv func(string) string) string {
	if getenv("AOS_TLS_CERT") != "" {
		return "https"
	}
	return "http"
}

// plainHTTPWarning is what to tell the owner when the server would carry
// sessions and tokens in clear text beyond this machine: plain HTTP on a
// non-loopback address, with no HTTPS public origin (a TLS proxy in front)
// declared. Empty otherwise.
func plainHTTPWarning(addr, sch, origin string) string {
	if sch == "https" {
		return ""
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() || host == "localhost" {
		return ""
	}
	if len(origin) >= 8 && origin[:8] == "https://" {
		return ""
	}
	return fmt.Sprintf("warning: serving plain HTTP on %s: passwords, session cookies and tokens cross the network in clear text. "+
		"Set AOS_TLS_CERT and AOS_TLS_KEY, or put a TLS proxy in front (AOS_TRUSTED_PROXIES, AOS_PUBLIC_ORIGIN=https://…)", addr)
}
