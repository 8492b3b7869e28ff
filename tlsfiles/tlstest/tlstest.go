// Package tlstest makes throwaway certificates for tests of TLS connections to the Temporal
// frontend: a CA, a server certificate for the loopback addresses, and client certificates.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a throwaway CA with a server certificate for 127.0.0.1 and a client
// certificate, plus a client certificate from another CA, all as PEM files in one directory.
type PKI struct {
	// CA is the CA's certificate.
	CA string
	// ServerCert and ServerKey are a server certificate for 127.0.0.1, 127.0.0.2 and
	// localhost, signed by the CA.
	ServerCert, ServerKey string
	// ClientCert and ClientKey are a client certificate signed by the CA.
	ClientCert, ClientKey string
	// StrangerCert and StrangerKey are a client certificate signed by another CA.
	StrangerCert, StrangerKey string
}

// New writes a fresh PKI into a temporary directory of t, with certificates valid for an hour.
func New(t testing.TB) PKI {
	t.Helper()
	dir := t.TempDir()
	ca, caKey := newCert(t, dir, "ca", nil, nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid = true, true
		c.KeyUsage = x509.KeyUsageCertSign
	})
	other, otherKey := newCert(t, dir, "other-ca", nil, nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid = true, true
		c.KeyUsage = x509.KeyUsageCertSign
	})
	newCert(t, dir, "server", ca, caKey, func(c *x509.Certificate) {
		c.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2")}
		c.DNSNames = []string{"localhost"}
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	client := func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth} }
	newCert(t, dir, "client", ca, caKey, client)
	newCert(t, dir, "stranger", other, otherKey, client)
	p := func(name string) string { return filepath.Join(dir, name) }
	return PKI{
		CA: p("ca.pem"), ServerCert: p("server.pem"), ServerKey: p("server-key.pem"),
		ClientCert: p("client.pem"), ClientKey: p("client-key.pem"),
		StrangerCert: p("stranger.pem"), StrangerKey: p("stranger-key.pem"),
	}
}

// newCert writes dir/name.pem and dir/name-key.pem: a P-256 certificate that edit shapes,
// signed by parent (self-signed when parent is nil).
func newCert(t testing.TB, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, edit func(*x509.Certificate)) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "accerl test " + name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	edit(tmpl)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, name+"-key.pem"), "PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
