package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/accerl/accerl/envrpc"
)

// defaultEnvListen is envserver's address when --listen is not given.
const defaultEnvListen = "127.0.0.1:7000"

func cmdEnvServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("envserver", "envserver [--listen HOST:PORT] [--insecure]   — serve accerl's simulators over dm_env_rpc (gRPC) to env \"remote\" blocks and Python dm_env_rpc clients", stderr)
	listen := fs.String("listen", defaultEnvListen, "address to listen on; a port of 0 picks a free one. Only loopback addresses unless --insecure")
	insecure := fs.Bool("insecure", false, "allow a --listen address other hosts can reach. There is no TLS or authentication yet: anyone who reaches the port can create worlds, so use it only on a network you trust")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("envserver: unexpected argument %q; the address is a flag (--listen)", fs.Arg(0))
	}
	if err := envrpc.CheckListen(*listen, *insecure); err != nil {
		return fmt.Errorf("envserver: %w", err)
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("envserver: %w", err)
	}
	worlds := envrpc.BuiltinWorlds()
	fmt.Fprintf(stdout, "Serving worlds %s over dm_env_rpc on %s. Ctrl-C to stop.\n",
		strings.Join(envrpc.WorldNames(worlds), ", "), lis.Addr())
	return envrpc.Serve(ctx, lis, envrpc.NewServer(worlds))
}
