package envrpc

import (
	"context"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding/gzip"
)

// Compression names what a client asks gRPC to compress its messages with; the server
// answers in kind. CompressionGzip is gzip at level 1 (gzip.BestSpeed), which rendered
// images shrink under at a small CPU cost; the state vectors ride along in the same
// message. A Python dm_env_rpc client turns it on with grpc.Compression.Gzip.
const (
	CompressionNone = ""
	CompressionGzip = gzip.Name // "gzip"
)

func init() {
	// Level 1 for every gzip stream of this process: the point is fewer bytes per step at
	// the least CPU per step, and grpc's default (level 6) costs several times more for a few
	// percent less. grpc-go reads the level when it builds its compressor pool, so this
	// must run before any stream does.
	if err := gzip.SetLevel(1); err != nil {
		panic(err)
	}
}

// Meter counts what remote environments cost on the wire: the bytes their connections send
// and receive (TLS and HTTP/2 framing included, as the network carries them) and the time
// of each Step's round trip. One Meter may serve many Envs at once (Config.Meter).
type Meter struct {
	sent, received atomic.Int64
	mu             sync.Mutex
	rtts           []time.Duration // per Step; sampled down to maxMeterSamples
	steps          int64
}

// maxMeterSamples bounds the round-trip samples a Meter keeps; past it every other one is
// dropped and the sampling rate halves, which keeps quantiles unbiased for a steady load.
const maxMeterSamples = 1 << 16

// MeterStats is a Meter's totals at one moment.
type MeterStats struct {
	BytesSent     int64   `json:"bytes_sent"`
	BytesReceived int64   `json:"bytes_received"`
	Steps         int64   `json:"steps"`
	P50StepMs     float64 `json:"p50_step_ms"` // Step round trip, median
	P99StepMs     float64 `json:"p99_step_ms"`
}

// BytesPerStep is the bytes sent and received per Step, or 0 before the first.
func (s MeterStats) BytesPerStep() float64 {
	if s.Steps == 0 {
		return 0
	}
	return float64(s.BytesSent+s.BytesReceived) / float64(s.Steps)
}

// Stats returns the totals so far.
func (m *Meter) Stats() MeterStats {
	m.mu.Lock()
	rtts := slices.Clone(m.rtts)
	steps := m.steps
	m.mu.Unlock()
	slices.Sort(rtts)
	q := func(p float64) float64 {
		if len(rtts) == 0 {
			return 0
		}
		return float64(rtts[int(p*float64(len(rtts)-1))].Nanoseconds()) / 1e6
	}
	return MeterStats{BytesSent: m.sent.Load(), BytesReceived: m.received.Load(), Steps: steps, P50StepMs: q(0.5), P99StepMs: q(0.99)}
}

// Reset zeroes the totals (between a benchmark's phases).
func (m *Meter) Reset() {
	m.sent.Store(0)
	m.received.Store(0)
	m.mu.Lock()
	m.rtts, m.steps = m.rtts[:0], 0
	m.mu.Unlock()
}

// step records one Step's round trip.
func (m *Meter) step(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps++
	// Keep every 2^k-th sample once full: k = how often the buffer has been halved.
	stride := max(int64(1), m.steps/maxMeterSamples)
	if m.steps%stride != 0 {
		return
	}
	if len(m.rtts) == maxMeterSamples {
		half := m.rtts[:0]
		for i := 0; i < len(m.rtts); i += 2 {
			half = append(half, m.rtts[i])
		}
		m.rtts = half
	}
	m.rtts = append(m.rtts, d)
}

// dialOption makes a client's connections count their bytes in m.
func (m *Meter) dialOption() grpc.DialOption {
	var d net.Dialer
	return grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, m: m}, nil
	})
}

// countingConn is a connection whose reads and writes add to a Meter.
type countingConn struct {
	net.Conn
	m *Meter
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.m.received.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.m.sent.Add(int64(n))
	return n, err
}
