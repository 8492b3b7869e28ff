package envrpc_test

import (
	"context"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/envrpc/envrpctest"
	"github.com/accerl/accerl/testenv"
	"github.com/accerl/accerl/testenv/tabletop"
)

// Steps per second of one environment stepped in process and over loopback gRPC, and the
// bytes per step both ways on the wire (TCP payload: gRPC, HTTP/2 and protobuf framing
// included). Run with: go test -run XXX -bench . ./envrpc

var benchTabletop = tabletop.Config{Suite: tabletop.SuiteSpatial}

func BenchmarkCartPoleInProcess(b *testing.B) { benchInProcess(b, cartPole(b), false) }
func BenchmarkCartPoleRemote(b *testing.B) {
	benchRemote(b, envrpc.Config{Settings: world(testenv.KindCartPole)})
}
func BenchmarkTabletopInProcess(b *testing.B) { benchInProcess(b, tabletopEnv(b), false) }
func BenchmarkTabletopRemote(b *testing.B) {
	benchRemote(b, envrpc.Config{Settings: envrpc.TabletopSettings(benchTabletop, false)})
}
func BenchmarkTabletopFramesInProcess(b *testing.B) { benchInProcess(b, tabletopEnv(b), true) }
func BenchmarkTabletopFramesRemote(b *testing.B) {
	benchRemote(b, envrpc.Config{Settings: envrpc.TabletopSettings(benchTabletop, true), Frames: true})
}

func cartPole(b *testing.B) testenv.Env {
	e, err := testenv.Make(testenv.KindCartPole, testenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func tabletopEnv(b *testing.B) testenv.Env {
	e, err := tabletop.New(benchTabletop)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// benchSink keeps the benchmarks' results alive.
var benchSink float64

// stepper is what both benchmarks step: obs, reward and episode end.
type stepper func(a []float64) (obs []float64, r float64, done bool)

// benchLoop times b.N steps after a first reset, then calls done.
func benchLoop(b *testing.B, space engine.ActionSpace, reset func(*rand.Rand) []float64, step stepper, done func()) {
	rng := rand.New(rand.NewPCG(1, 1))
	a := make([]float64, space.Dims())
	for i := range a {
		if space.N == 0 {
			a[i] = 0.1
		}
	}
	reset(rng)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if space.N > 0 {
			a[0] = float64(i % space.N)
		}
		obs, r, end := step(a)
		benchSink += obs[0] + r
		if end {
			reset(rng)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	if done != nil {
		done()
	}
}

func benchInProcess(b *testing.B, env testenv.Env, frames bool) {
	s := env.ActionSpace()
	benchLoop(b, engine.ActionSpace{N: s.N, Low: s.Low, High: s.High}, env.Reset, func(a []float64) ([]float64, float64, bool) {
		obs, r, term, trunc := env.Step(a)
		if frames {
			for _, im := range env.(*tabletop.Env).Images() {
				benchSink += float64(im[0])
			}
		}
		return obs, r, term || trunc
	}, nil)
}

// countingConn counts the bytes a connection carries both ways.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func benchRemote(b *testing.B, cfg envrpc.Config) {
	srv := envrpctest.Start(b)
	var wire atomic.Int64
	cfg.Address = srv.Addr
	cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return countingConn{c, &wire}, err
	})}
	e := dial(b, cfg)
	var frame []byte
	var start int64
	first := func(rng *rand.Rand) []float64 {
		obs := e.Reset(rng)
		if start == 0 {
			start = wire.Load()
		}
		return obs
	}
	benchLoop(b, e.ActionSpace(), first, func(a []float64) ([]float64, float64, bool) {
		r := e.Step(a)
		if cfg.Frames {
			frame = e.Frames().Frame(frame[:0])
		}
		return r.Obs, r.Reward, r.Terminated || r.Truncated
	}, func() { b.ReportMetric(float64(wire.Load()-start)/float64(b.N), "wire-B/step") })
}
