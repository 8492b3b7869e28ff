package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/tlsfiles"
)

// defaultEnvListen is envserver's address when --listen is not given.
const defaultEnvListen = "127.0.0.1:7000"

func cmdEnvServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("envserver", "envserver [--listen HOST:PORT] [--tls-cert F --tls-key F [--tls-ca F]] [--insecure]   — serve accerl's simulators over dm_env_rpc (gRPC) to env \"remote\" blocks and Python dm_env_rpc clients", stderr)
	listen := fs.String("listen", defaultEnvListen, "address to listen on; a port of 0 picks a free one. Only loopback addresses unless TLS or --insecure")
	insecure := fs.Bool("insecure", false, "allow a --listen address other hosts can reach without TLS: anyone who reaches the port can create worlds, so use it only on a network you trust")
	var tf tlsfiles.Files
	fs.StringVar(&tf.Cert, "tls-cert", "", "PEM certificate of this server (with --tls-key): clients connect with TLS, and the certificate must name the host they dial")
	fs.StringVar(&tf.Key, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&tf.CA, "tls-ca", "", "PEM CA certificates: accept only clients presenting a certificate one of them signed (mutual TLS; env \"remote\" { tls_cert, tls_key })")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("envserver: unexpected argument %q; the address is a flag (--listen)", fs.Arg(0))
	}
	tlsCfg, err := tf.ServerConfig()
	if err != nil {
		return fmt.Errorf("envserver: %w", err)
	}
	if err := envrpc.CheckListen(*listen, tlsCfg != nil, *insecure); err != nil {
		return fmt.Errorf("envserver: %w", err)
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("envserver: %w", err)
	}
	worlds := envrpc.BuiltinWorlds()
	mode := "plaintext"
	switch {
	case tf.CA != "":
		mode = "mutual TLS"
	case tlsCfg != nil:
		mode = "TLS"
	}
	fmt.Fprintf(stdout, "Serving worlds %s over dm_env_rpc (%s) on %s. Ctrl-C to stop.\n",
		strings.Join(envrpc.WorldNames(worlds), ", "), mode, lis.Addr())
	return envrpc.Serve(ctx, lis, envrpc.NewServer(worlds), tlsCfg)
}
