package worker

import (
	"net"
	"strconv"
	"testing"
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
