package activities

import (
	"context"
	"fmt"
	"sync"

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
	cfg := envrpc.Config{Address: addrs[i%len(addrs)], Settings: worldSettings(env), Warn: warn,
		Frames: env.Kind == specs.EnvTabletop && env.Pixels, TLS: tlsCfg, Compression: env.Remote.Compression, Meter: meter}
	r, err := envrpc.Dial(context.Background(), cfg)
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
