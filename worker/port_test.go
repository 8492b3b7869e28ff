package worker

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Ports for the embedded server come from below the kernel's ephemeral range, where no
// outgoing connection can take them between the choice and the server's bind, and are free.
func TestFreePortAvoidsEphemeralRange(t *testing.T) {
	lo, hi := ephemeralPorts()
	if lo <= 10000 || hi < lo {
		t.Fatalf("ephemeral range [%d, %d]", lo, hi)
	}
	for range 50 {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < 10000 || p >= lo {
			t.Fatalf("port %d outside [10000, %d)", p, lo)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		_ = l.Close()
	}
}

// A port the server was told to use that another process holds is an error from StartServer,
// not the server's fatal log entry, which would exit the process.
func TestStartServerPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = StartServer(ServerConfig{StateDir: t.TempDir(), Port: port})
	if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("StartServer on a taken port: %v, want ErrPortInUse naming the port", err)
	}
	if _, err := StartServer(ServerConfig{StateDir: t.TempDir(), Port: 70000}); err == nil || !strings.Contains(err.Error(), "70000") {
		t.Errorf("StartServer on port 70000: %v, want an error naming the port", err)
	}
}

// The server's fatal entries end the process; what they say goes to the terminal with the error.
func TestFatalReason(t *testing.T) {
	fields := []zapcore.Field{zap.String("service", "frontend"), zap.Error(errors.New("listen tcp 127.0.0.1:7233: bind: address already in use"))}
	if got, want := fatalReason("Failed to start gRPC listener", fields), "Failed to start gRPC listener: listen tcp 127.0.0.1:7233: bind: address already in use"; got != want {
		t.Errorf("fatalReason = %q, want %q", got, want)
	}
	if got := fatalReason("no fields", nil); got != "no fields" {
		t.Errorf("fatalReason without fields = %q", got)
	}
}
