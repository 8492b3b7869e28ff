package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/config"

	"github.com/accerl/accerl/tlsfiles"
)

// TLSFiles names the PEM files of one side of a TLS connection to the Temporal frontend
// (tlsfiles.Files). The zero value is plaintext.
type TLSFiles = tlsfiles.Files

// frontendTLS checks f as a server's files and returns the frontend's TLS settings: the
// certificate and key are required, and a CA requires client certificates it signed. The
// server reads the files again itself; reading them here first turns a bad file into an
// error that names it instead of a fatal log entry that ends the process.
func frontendTLS(f TLSFiles) (config.GroupTLS, error) {
	if f.Cert == "" && f.Key == "" {
		return config.GroupTLS{}, errors.New("a TLS server needs its certificate and key: give --tls-cert and --tls-key (--tls-ca alone only says which client certificates to accept)")
	}
	if _, err := f.KeyPair(); err != nil {
		return config.GroupTLS{}, err
	}
	srv := config.ServerTLS{CertFile: f.Cert, KeyFile: f.Key}
	if f.CA != "" {
		if _, err := tlsfiles.CertPool(f.CA); err != nil {
			return config.GroupTLS{}, err
		}
		srv.ClientCAFiles, srv.RequireClientAuth = []string{f.CA}, true
	}
	return config.GroupTLS{Server: srv}, nil
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
