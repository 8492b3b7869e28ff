package activities

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/envrpc/envrpctest"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/tlsfiles"
	"github.com/accerl/accerl/tlsfiles/tlstest"
)

// An arm's remote environments reach an envserver that requires mutual TLS with the spec's
// tls_ca, tls_cert and tls_key, and step; without the client certificate, or in plaintext,
// the dial fails.
func TestRemoteEnvMutualTLS(t *testing.T) {
	pki := tlstest.New(t)
	srvTLS, err := tlsfiles.Files{Cert: pki.ServerCert, Key: pki.ServerKey, CA: pki.CA}.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	srv := envrpctest.StartWorldsTLS(t, envrpc.BuiltinWorlds(), srvTLS)
	arm := func(tls string) specs.Config {
		exp, diags := specs.Parse("tls.hcl", []byte(fmt.Sprintf(`
experiment "tls" {
  budget { env_steps = 64 }
  env "remote" {
    address = %q
    world   = "cartpole"
    %s
  }
}`, srv.Addr, tls)), nil)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return exp.Arms[0].Config
	}
	dial := func(c specs.Config) error {
		env, err := EnvFactory(c, 1)(0)
		if err != nil {
			return err
		}
		defer engine.CloseEnv(env)
		env.Reset(rand.New(rand.NewPCG(1, 2)))
		env.Step([]float64{1})
		return nil
	}
	ok := arm(fmt.Sprintf("tls_ca = %q\n    tls_cert = %q\n    tls_key = %q", pki.CA, pki.ClientCert, pki.ClientKey))
	if err := dial(ok); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	// The refusals, dialled directly with a short retry (the factory retries a lost
	// server for a minute).
	noCert, err := tlsfiles.Files{CA: pki.CA}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]*tls.Config{"no client certificate": noCert, "plaintext": nil} {
		e, err := envrpc.Dial(context.Background(), envrpc.Config{Address: srv.Addr, Settings: envrpc.Settings{envrpc.SettingWorld: envrpc.String("cartpole")},
			TLS: tc, Retry: time.Second, Timeout: 2 * time.Second})
		if err == nil {
			e.Close()
			t.Errorf("%s: the server accepted the connection", name)
		}
	}
	if _, diags := specs.Parse("bad.hcl", []byte(fmt.Sprintf(`
experiment "tls" {
  budget { env_steps = 64 }
  env "remote" {
    address  = %q
    world    = "cartpole"
    tls_cert = "client.pem"
  }
}`, srv.Addr)), nil); !diags.HasErrors() || !strings.Contains(diags.Error(), "tls_cert and env.tls_key go together") {
		t.Errorf("tls_cert without tls_key: %v", diags)
	}
}
