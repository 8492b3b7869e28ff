package activities

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/accerl/accerl/activities/engine"
	"github.com/accerl/accerl/envrpc"
	"github.com/accerl/accerl/specs"
	"github.com/accerl/accerl/testenv/tabletop"
	"github.com/accerl/accerl/tlsfiles"
)

// Remote environments (env "remote"): an arm's world stepped on dm_env_rpc servers by
// envrpc's client, in place of the in-process simulator, beneath the same wrappers
// (features, action chunks, frames, fixed evaluation states). The servers' specs must match
// the world's in-process twin, which is what the spec's policy and checks were resolved
// against; a mismatch fails the engine's start with the observation or action it concerns.

// dialRemote connects environment i of a remote arm to its server (addresses round-robin),
// creating the world with the spec's settings.
// meter, when set, counts its bytes and round trips.
func dialRemote(env specs.Env, i int, warn func(string), meter *envrpc.Meter) (*envrpc.Env, error) {
	local := env
	local.Remote = nil
	twin, err := MakeSim(local)
	if err != nil {
		return nil, err
	}
	addrs := env.Remote.Addresses
	tf := tlsfiles.Files{CA: env.Remote.TLSCA, Cert: env.Remote.TLSCert, Key: env.Remote.TLSKey}
	tlsCfg, err := tf.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("env %d: remote TLS (env.tls_ca, tls_cert, tls_key): %w", i, err)
	}
	cfg := envrpc.Config{Settings: worldSettings(env), Warn: warn,
		Frames: env.Kind == specs.EnvTabletop && env.Pixels, TLS: tlsCfg, Compression: env.Remote.Compression, Meter: meter}
	r, err := dialFailover(cfg, addrs, i, warn)
	if err != nil {
		return nil, fmt.Errorf("env %d: %w", i, err)
	}
	frameBytes := 0
	if tt, ok := twin.(*tabletop.Env); ok && cfg.Frames {
		frameBytes = tt.ImageBytesPerStep()
	}
	if err := r.Conform(twin.ObsDim(), simEnv{twin}.ActionSpace(), frameBytes); err != nil {
		r.Close()
		return nil, fmt.Errorf("env %d: %w", i, err)
	}
	return r, nil
}

// failoverRetry is how long an environment with more than one server to choose from waits
// for its server (at the start, and after losing it mid-segment) before it gives up on it.
var failoverRetry = 10 * time.Second

// dialFailover dials environment i on addrs[i mod n], or, when that server does not answer
// within failoverRetry, on the next address that does (warning that it moved), so that a
// server that is gone for good costs its environments one segment retry, not the run: the
// segment that lost it fails after failoverRetry and is retried from its checkpoint, and the
// retry places those environments on the servers that are left. Every server runs the same
// world code and episodes are seeded by the engine, so which server steps an environment
// does not change what it computes. With one address there is nowhere to move; it is
// retried for envrpc's default minute.
func dialFailover(cfg envrpc.Config, addrs []string, i int, warn func(string)) (*envrpc.Env, error) {
	if len(addrs) == 1 {
		cfg.Address = addrs[0]
		return envrpc.Dial(context.Background(), cfg)
	}
	cfg.Retry = failoverRetry
	home := i % len(addrs)
	// From the home server on, round the ring; servers found dead a moment ago go last, so
	// that the environments homed on one do not each wait failoverRetry for it.
	var order, dead []string
	for k := range addrs {
		if a := addrs[(home+k)%len(addrs)]; deadServers.recently(a) {
			dead = append(dead, a)
		} else {
			order = append(order, a)
		}
	}
	order = append(order, dead...)
	var first error
	for _, addr := range order {
		cfg.Address = addr
		r, err := envrpc.Dial(context.Background(), cfg)
		if err == nil {
			deadServers.forget(addr)
			if addr != addrs[home] {
				why := "it did not answer a moment ago"
				if first != nil {
					why = first.Error()
				}
				msg := fmt.Sprintf("env %d: envserver %s is unreachable (%s); stepping it on %s instead", i, addrs[home], why, addr)
				if warn != nil {
					warn(msg)
				} else {
					log.Print(msg)
				}
			}
			return r, nil
		}
		if !errors.Is(err, envrpc.ErrUnavailable) {
			return nil, err // the server answered, and refused: moving would not help
		}
		deadServers.mark(addr)
		if first == nil {
			first = err
		}
	}
	return nil, fmt.Errorf("none of the %d envservers answered within %v: %w", len(addrs), failoverRetry, first)
}

// deadServers remembers, for this process, the envservers that did not answer a dial.
var deadServers = &serverMemory{dead: map[string]time.Time{}}

// deadMemory is how long an unanswered dial marks a server as dead.
const deadMemory = time.Minute

// serverMemory is a set of addresses with the time each was added.
type serverMemory struct {
	mu   sync.Mutex
	dead map[string]time.Time
}

func (m *serverMemory) mark(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dead[addr] = time.Now()
}

func (m *serverMemory) forget(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.dead, addr)
}

func (m *serverMemory) recently(addr string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.dead[addr]
	return ok && time.Since(t) < deadMemory
}

// worldSettings are the CreateWorld settings of an arm's world.
func worldSettings(env specs.Env) envrpc.Settings {
	if env.Kind == specs.EnvTabletop {
		return envrpc.TabletopSettings(tabletopConfig(env), env.Pixels)
	}
	return envrpc.Settings{envrpc.SettingWorld: envrpc.String(env.Kind),
		envrpc.SettingMaxEpisodeSteps: envrpc.Int64(int64(env.MaxEpisodeSteps))}
}

// The wrappers pass Close on to the environment beneath, so that Engine.Close reaches a
// remote one.

func (e *featureEnv) Close() error   { return engine.CloseEnv(e.Env) }
func (e chunkEnv) Close() error      { return engine.CloseEnv(e.Env) }
func (e framedEnv) Close() error     { return engine.CloseEnv(e.Env) }
func (e *fixedInitEnv) Close() error { return engine.CloseEnv(e.Env) }

// envWarnings collects the warnings of a segment's environments (a remote one that lost
// its server and reconnected) for the segment's result, at most maxEnvWarnings of them and
// a count of the rest.
type envWarnings struct {
	mu      sync.Mutex
	list    []string
	dropped int
}

const maxEnvWarnings = 16

func (w *envWarnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.list) < maxEnvWarnings {
		w.list = append(w.list, msg)
	} else {
		w.dropped++
	}
}

func (w *envWarnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	if w.dropped > 0 {
		out = append(out, fmt.Sprintf("%d more environment warnings like these", w.dropped))
	}
	w.list, w.dropped = nil, 0
	return out
}

// remoteSim is a remote environment as the offline collector's simulator (OfflineSims).
type remoteSim struct{ *envrpc.Env }

func (s remoteSim) Actions() (n int, low, high []float64) {
	a := s.ActionSpace()
	return a.N, a.Low, a.High
}

func (s remoteSim) Step(action []float64) (obs []float64, reward float64, terminated, truncated, success bool) {
	r := s.Env.Step(action)
	return r.Obs, r.Reward, r.Terminated, r.Truncated, r.Success
}

// remoteFrames is a remote world's images and instruction, for framedEnv.
type remoteFrames struct {
	engine.FrameEnv
	r *envrpc.Env
}

func (f remoteFrames) Instruction() string { return f.r.Instruction() }
