// Package envrpctest runs an envrpc server of the built-in worlds on a loopback port for
// tests, in process.
package envrpctest

import (
	"context"
	"crypto/tls"
	"net"
	"testing"

	"github.com/accerl/accerl/envrpc"
)

// Server is a running envrpc server.
type Server struct {
	// Addr is its host:port on 127.0.0.1.
	Addr   string
	worlds map[string]envrpc.MakeWorld
	tls    *tls.Config
	cancel context.CancelFunc
	done   chan error
}

// Start serves envrpc.BuiltinWorlds on a free loopback port until the test ends.
func Start(t testing.TB) *Server { t.Helper(); return StartWorlds(t, envrpc.BuiltinWorlds()) }

// StartWorlds serves worlds on a free loopback port until the test ends.
func StartWorlds(t testing.TB, worlds map[string]envrpc.MakeWorld) *Server {
	return StartWorldsTLS(t, worlds, nil)
}

// StartWorldsTLS is StartWorlds with TLS settings for the server (nil: plaintext).
func StartWorldsTLS(t testing.TB, worlds map[string]envrpc.MakeWorld, tlsCfg *tls.Config) *Server {
	t.Helper()
	s := &Server{worlds: worlds, tls: tlsCfg}
	s.listen(t, "127.0.0.1:0")
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) listen(t testing.TB, addr string) {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("envrpctest: listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.Addr, s.cancel, s.done = lis.Addr().String(), cancel, make(chan error, 1)
	go func() { s.done <- envrpc.Serve(ctx, lis, envrpc.NewServer(s.worlds), s.tls) }()
}

// Stop ends the server and every stream (its worlds are lost, as in a crash); stopping a
// stopped server does nothing.
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel = nil
}

// Restart serves again on the same address, with no worlds.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	s.listen(t, s.Addr)
}
