// Package tlsfiles loads the PEM files of one side of a TLS connection, for the Temporal
// frontend (package worker) and the environment servers (package envrpc) alike, with errors
// that name the file at fault. It depends on the standard library only.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// Files names the PEM files of one side of a TLS connection. The zero value is plaintext.
type Files struct {
	// Cert is this side's certificate (a leaf, optionally followed by its intermediates): the
	// server's own, or the one a client presents to a server that requires client certificates.
	Cert string
	// Key is Cert's private key.
	Key string
	// CA holds the CA certificates to trust. On a server it turns on mutual TLS: every client
	// must present a certificate signed by one of them. On a client it verifies the server's
	// certificate; empty trusts the system's roots.
	CA string
}

// On reports whether any file is named, i.e. whether the connection uses TLS.
func (f Files) On() bool { return f != Files{} }

// ClientConfig returns the TLS settings of a client with f, or nil (plaintext) when f names
// no file. The server's name is checked against the host of the address dialled, so the
// server's certificate must name that host or IP address.
func (f Files) ClientConfig() (*tls.Config, error) {
	if !f.On() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.Cert != "" || f.Key != "" {
		pair, err := f.KeyPair()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if f.CA != "" {
		pool, err := CertPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// ServerConfig returns the TLS settings of a server with f, or nil (plaintext) when f names
// no file: the certificate and key are required, and a CA requires client certificates it
// signed (mutual TLS).
func (f Files) ServerConfig() (*tls.Config, error) {
	if !f.On() {
		return nil, nil
	}
	if f.Cert == "" && f.Key == "" {
		return nil, errors.New("a TLS server needs its certificate and key: give --tls-cert and --tls-key (--tls-ca alone only says which client certificates to accept)")
	}
	pair, err := f.KeyPair()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if f.CA != "" {
		pool, err := CertPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// KeyPair loads f.Cert and f.Key, which must both be given, with errors that name the file
// at fault.
func (f Files) KeyPair() (tls.Certificate, error) {
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

// CertPool is the pool of the CA certificates in the PEM file at path.
func CertPool(path string) (*x509.CertPool, error) {
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
