package worker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/config"
)

// TLSFiles names the PEM files of one side of a TLS connection to the Temporal frontend. The
// zero value is plaintext.
type TLSFiles struct {
	// Cert is this side's certificate (a leaf, optionally followed by its intermediates): the
	// server's own, or the one a client presents to a server that requires client certificates.
	Cert string
	// Key is Cert's private key.
	Key string
	// CA holds the CA certificates to trust. On the server it turns on mutual TLS: every client
	// must present a certificate signed by one of them. On a client it verifies the server's
	// certificate; empty trusts the system's roots.
	CA string
}

// On reports whether any file is named, i.e. whether the connection uses TLS.
func (f TLSFiles) On() bool { return f != TLSFiles{} }

// ClientConfig returns the TLS settings of a client that dials the frontend with f, or nil
// (plaintext) when f names no file. The server's name is checked against the host of the
// address dialled, so the server's certificate must name that host or IP address.
func (f TLSFiles) ClientConfig() (*tls.Config, error) {
	if !f.On() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.Cert != "" || f.Key != "" {
		pair, err := f.keyPair()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if f.CA != "" {
		pool, err := certPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// frontendTLS checks f as a server's files and returns the frontend's TLS settings: the
// certificate and key are required, and a CA requires client certificates it signed. The
// server reads the files again itself; reading them here first turns a bad file into an
// error that names it instead of a fatal log entry that ends the process.
func (f TLSFiles) frontendTLS() (config.GroupTLS, error) {
	if f.Cert == "" && f.Key == "" {
		return config.GroupTLS{}, errors.New("a TLS server needs its certificate and key: give --tls-cert and --tls-key (--tls-ca alone only says which client certificates to accept)")
	}
	if _, err := f.keyPair(); err != nil {
		return config.GroupTLS{}, err
	}
	srv := config.ServerTLS{CertFile: f.Cert, KeyFile: f.Key}
	if f.CA != "" {
		if _, err := certPool(f.CA); err != nil {
			return config.GroupTLS{}, err
		}
		srv.ClientCAFiles, srv.RequireClientAuth = []string{f.CA}, true
	}
	return config.GroupTLS{Server: srv}, nil
}

// keyPair loads f.Cert and f.Key, which must both be given, with errors that name the file
// at fault.
func (f TLSFiles) keyPair() (tls.Certificate, error) {
	switch {
	case f.Cert == "":
		return tls.Certificate{}, fmt.Errorf("TLS key %s has no certificate: give it with --tls-cert", f.Key)
	case f.Key == "":
		return tls.Certificate{}, fmt.Errorf("TLS certificate %s has no key: give its private key with --tls-key", f.Cert)
	}
	certPEM, _, err := readCerts(f.Cert)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := os.ReadFile(f.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read TLS key: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS key %s (for certificate %s): %w", f.Key, f.Cert, err)
	}
	return pair, nil
}

// certPool is the pool of the CA certificates in the PEM file at path.
func certPool(path string) (*x509.CertPool, error) {
	_, certs, err := readCerts(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// readCerts reads the PEM file at path and parses its certificates: there must be at least
// one, and each must parse. It returns the file's contents too.
func readCerts(path string) ([]byte, []*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read TLS certificate: %w", err)
	}
	var certs []*x509.Certificate
	for rest := b; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, nil, fmt.Errorf("TLS certificate file %s: %w", path, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, nil, fmt.Errorf("TLS certificate file %s holds no PEM certificate (a \"-----BEGIN CERTIFICATE-----\" block)", path)
	}
	return b, certs, nil
}

// CheckBind refuses a frontend bind address other hosts can reach when it has no TLS, unless
// insecure: the frontend has no authentication, so anyone who reaches it could start, stop
// and read every workflow. ip must be an IP address ("" is 127.0.0.1).
func CheckBind(ip string, tlsOn, insecure bool) error {
	if ip == "" {
		return nil
	}
	addr := net.ParseIP(ip)
	if addr == nil {
		return fmt.Errorf("--ip needs an IP address of this host such as 10.0.0.5, or 0.0.0.0 for every interface, not %q", ip)
	}
	if addr.IsLoopback() || tlsOn || insecure {
		return nil
	}
	return fmt.Errorf("--ip %s lets other hosts reach the Temporal frontend, which has no authentication: "+
		"give it TLS with --tls-cert and --tls-key (and --tls-ca to accept only clients whose certificates that CA signed), "+
		"or pass --insecure on a network you trust", ip)
}

// Dial connects an SDK client to the Temporal frontend at hostPort, in namespace, over TLS
// with tf's files when it names any, and discards the SDK's own log. Its error is a
// *DialError.
func Dial(ctx context.Context, hostPort, namespace string, tf TLSFiles) (client.Client, error) {
	tlsCfg, err := tf.ClientConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, client.Options{
		HostPort:          hostPort,
		Namespace:         namespace,
		Logger:            sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		ConnectionOptions: client.ConnectionOptions{TLS: tlsCfg},
	})
	if err != nil {
		return nil, &DialError{Addr: hostPort, Hint: explainDial(err, hostPort, tlsCfg != nil), Err: err}
	}
	return c, nil
}

// DialError is Dial's error: the address, the SDK's error, and a hint that says what is
// likely wrong when TLS explains the failure: a plaintext server dialled with TLS or the
// other way round, a client certificate missing or refused, a server certificate the client
// cannot verify.
type DialError struct {
	Addr string
	Hint string // "" when TLS does not explain the error
	Err  error
}

func (e *DialError) Error() string {
	if e.Hint == "" {
		return fmt.Sprintf("connect to Temporal at %s: %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("connect to Temporal at %s: %s (%v)", e.Addr, e.Hint, e.Err)
}

// Unwrap returns the SDK's error.
func (e *DialError) Unwrap() error { return e.Err }

// explainDial turns a failed dial of the frontend at hostPort into a sentence that says
// what is likely wrong when TLS is the cause, or returns "" when it is not. withTLS says
// whether the client used TLS.
func explainDial(err error, hostPort string, withTLS bool) string {
	msg := err.Error()
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case withTLS && has("first record does not look like a TLS handshake"):
		return fmt.Sprintf("the server at %s does not use TLS: drop --tls-cert, --tls-key and --tls-ca, or start it with 'accerl server --tls-cert ... --tls-key ...'", hostPort)
	case withTLS && has("certificate required", "bad certificate", "unknown certificate authority", "expired certificate",
		// With TLS 1.3 the client may be writing when the server drops it for its certificate.
		"broken pipe", "connection reset by peer"):
		return fmt.Sprintf("the server at %s requires a client certificate signed by its --tls-ca and got none it accepts: give one with --tls-cert and --tls-key", hostPort)
	case withTLS && has("certificate signed by unknown authority"):
		return fmt.Sprintf("the certificate of the server at %s is not signed by a CA this client trusts: give the CA that signed it with --tls-ca", hostPort)
	case withTLS && has("x509: certificate is valid for", "cannot validate certificate for"):
		return fmt.Sprintf("the certificate of the server at %s does not name that address: dial a host name or IP address its certificate names", hostPort)
	case !withTLS && has("error reading server preface", "connection reset by peer", "EOF"):
		return fmt.Sprintf("the server at %s closed the connection, as a TLS server does with a plaintext client: if it was started with --tls-cert, give --tls-ca (and --tls-cert and --tls-key when it requires client certificates)", hostPort)
	}
	return ""
}
