package envrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/accerl/accerl/activities/engine"
	pb "github.com/accerl/accerl/envrpc/dmenvrpc"
)

// ErrUnavailable is wrapped by the error of a client that could not reach its server within
// Config.Retry: Dial's, and the value an Env panics with when it loses its server for good
// (engine.Env's Step and Reset return no errors; the engine turns a rollout panic into the
// segment's error, which a retried segment recovers from).
var ErrUnavailable = errors.New("remote environment unavailable")

// Config says how to reach a remote environment and what to ask of it.
type Config struct {
	// Address is the server's host:port.
	Address string
	// TLS, when set (tlsfiles.Files.ClientConfig), makes the connection TLS: the server's
	// certificate must name Address's host; nil is plaintext.
	TLS *tls.Config
	// Settings create the world (CreateWorld): SettingWorld names it, the rest are its own.
	Settings Settings
	// Frames requests the "frame" observation on every step, for Frames.
	Frames bool
	// Retry is how long a lost server is retried, with exponential backoff from 50 ms to
	// 5 s, before the client gives up (0: one minute).
	Retry time.Duration
	// Timeout bounds one round trip; a server that takes longer counts as lost (0: one
	// minute).
	Timeout time.Duration
	// Warn receives a message each time a lost server is reached again and the episode
	// restarted (nil: the standard logger).
	Warn func(msg string)
	// DialOptions are appended to the gRPC client's options.
	DialOptions []grpc.DialOption
	// Compression is CompressionNone or CompressionGzip (gzip level 1 on every message,
	// both ways: see CompressionGzip).
	Compression string
	// Meter, when set, counts this environment's bytes on the wire and Step round trips.
	Meter *Meter
}

// Env is one remote environment: a world on a dm_env_rpc server, created and joined over
// one stream, stepped one round trip per step. It implements engine.Env; Frames is its
// engine.FrameEnv when the world offers frames. Like every engine.Env it is used by one
// goroutine at a time.
//
// A lost stream (the server restarted, the network failed, a round trip timed out) is
// reconnected with backoff: a new world with the same settings and specs, and the episode
// that was running ends in a truncated step that repeats the last observation, after which
// the engine resets as after any episode; Config.Warn hears of it.
//
// MarshalBinary reads the world's complete state (property "state" of the properties
// extension, which accerl's server offers), so a checkpoint resumes the remote episode
// bit-identically, as a local simulator's does. A server without that property (a Python
// one, say) cannot be captured: its environment restarts its episode on resume, the first
// step after it ending the episode truncated.
type Env struct {
	cfg    Config
	conn   *grpc.ClientConn
	stream pb.Environment_ProcessClient
	cancel context.CancelFunc

	world string
	specs *pb.ActionObservationSpecs
	obs   obsUIDs
	act   actionSpec

	stepReq  *pb.EnvironmentRequest // reused: its action tensor is refilled each step
	stepObs  []uint64               // requested on every step
	resetObs []uint64               // requested on the first step of an episode

	last        []float64 // the current observation
	frame       []byte
	instruction string
	noState     bool // the server has no state property
	restart     bool // the next Step ends the episode (server lost, or resumed without state)
}

// obsUIDs are the uids of the observations the client reads; found says which exist.
type obsUIDs struct {
	state, reward, success, frame, instruction      uint64
	hasReward, hasSuccess, hasFrame, hasInstruction bool
	obsDim, frameBytes                              int
}

// actionSpec is the world's action, as the engine sees it and as the wire carries it.
type actionSpec struct {
	uid   uint64
	dtype pb.DataType
	space engine.ActionSpace
}

// Dial connects to cfg.Address, creates a world with cfg.Settings and joins it, retrying
// an unreachable server for cfg.Retry. The world's specs must offer the observations
// "state" and "reward" and one action (see the package documentation).
func Dial(ctx context.Context, cfg Config) (*Env, error) {
	if cfg.Retry <= 0 {
		cfg.Retry = time.Minute
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 5 * time.Second,
			Backoff: backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second}}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)),
	}, cfg.DialOptions...)
	switch cfg.Compression {
	case CompressionNone:
	case CompressionGzip:
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.UseCompressor(CompressionGzip)))
	default:
		return nil, fmt.Errorf("dial remote env %s: compression %q: want %q or none", cfg.Address, cfg.Compression, CompressionGzip)
	}
	if cfg.Meter != nil {
		opts = append(opts, cfg.Meter.dialOption())
	}
	conn, err := grpc.NewClient(cfg.Address, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial remote env %s: %w", cfg.Address, err)
	}
	e := &Env{cfg: cfg, conn: conn}
	if err := e.connectRetrying(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("dial remote env %s: %w", cfg.Address, err)
	}
	return e, nil
}

// lostError is a failure of the stream itself, as opposed to an error the server answered.
type lostError struct{ err error }

func (e lostError) Error() string { return e.err.Error() }
func (e lostError) Unwrap() error { return e.err }

// connectRetrying connects until it succeeds, the server answers an error, or cfg.Retry
// has passed.
func (e *Env) connectRetrying(ctx context.Context) error {
	deadline := time.Now().Add(e.cfg.Retry)
	delay := 50 * time.Millisecond
	for {
		attempt, cancel := context.WithDeadline(ctx, deadline)
		err := e.connect(attempt)
		cancel()
		var lost lostError
		if err == nil || !errors.As(err, &lost) {
			return err
		}
		if time.Now().Add(delay).After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%w after %s: %w", ErrUnavailable, e.cfg.Retry, err)
		}
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Second)
	}
}

// connect opens a stream, creates the world and joins it. A reconnection must find the
// specs of the first connection.
func (e *Env) connect(ctx context.Context) error {
	if e.cancel != nil {
		e.cancel()
	}
	sctx, cancel := context.WithCancel(context.Background())
	// The stream outlives ctx, which only bounds the wait for the server.
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	stream, err := pb.NewEnvironmentClient(e.conn).Process(sctx, grpc.WaitForReady(true))
	if err != nil {
		cancel()
		return lostError{err}
	}
	e.stream, e.cancel = stream, cancel
	resp, err := e.roundTrip(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_CreateWorld{
		CreateWorld: &pb.CreateWorldRequest{Settings: e.cfg.Settings}}})
	if err != nil {
		return err
	}
	world := resp[0].GetCreateWorld().GetWorldName()
	resp, err = e.roundTrip(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_JoinWorld{
		JoinWorld: &pb.JoinWorldRequest{WorldName: world}}})
	if err != nil {
		return err
	}
	specs := resp[0].GetJoinWorld().GetSpecs()
	if e.specs != nil {
		if !proto.Equal(specs, e.specs) {
			return fmt.Errorf("world %q came back with other specs:\n%v\nwas:\n%v", world, specs, e.specs)
		}
		e.world = world
		return nil
	}
	if err := e.readSpecs(specs); err != nil {
		return fmt.Errorf("world %q: %w", world, err)
	}
	e.world, e.specs = world, specs
	return nil
}

// readSpecs finds the observations and the action the client uses.
func (e *Env) readSpecs(specs *pb.ActionObservationSpecs) error {
	o := &e.obs
	for uid, s := range specs.GetObservations() {
		switch s.GetName() {
		case ObsState:
			n, err := vectorLen(s)
			if err != nil {
				return fmt.Errorf("observation %q: %w", ObsState, err)
			}
			o.state, o.obsDim = uid, n
		case ObsReward:
			o.reward, o.hasReward = uid, true
		case ObsSuccess:
			o.success, o.hasSuccess = uid, true
		case ObsFrame:
			o.frame, o.hasFrame = uid, true
			o.frameBytes = 1
			for _, d := range s.GetShape() {
				o.frameBytes *= int(d)
			}
		case ObsInstruction:
			o.instruction, o.hasInstruction = uid, true
		}
	}
	switch {
	case o.obsDim == 0:
		return fmt.Errorf("no observation %q (a vector of known length)", ObsState)
	case !o.hasReward:
		return fmt.Errorf("no observation %q", ObsReward)
	case e.cfg.Frames && !o.hasFrame:
		return fmt.Errorf("frames requested, but the world offers no observation %q (a tabletop world offers it with setting %q)", ObsFrame, SettingPixels)
	case e.cfg.Frames && o.frameBytes <= 0:
		return fmt.Errorf("observation %q has shape %v, want fixed dimensions", ObsFrame, specs.Observations[o.frame].GetShape())
	}
	a, err := readAction(specs.GetActions())
	if err != nil {
		return err
	}
	e.act = a
	e.stepObs = []uint64{o.state, o.reward}
	if o.hasSuccess {
		e.stepObs = append(e.stepObs, o.success)
	}
	if e.cfg.Frames {
		e.stepObs = append(e.stepObs, o.frame)
	}
	e.resetObs = slices.Clone(e.stepObs)
	if o.hasInstruction {
		e.resetObs = append(e.resetObs, o.instruction)
	}
	e.stepReq = &pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_Step{Step: &pb.StepRequest{
		Actions: map[uint64]*pb.Tensor{a.uid: newActionTensor(a)}, RequestedObservations: e.stepObs}}}
	return nil
}

// vectorLen is the length of a one-dimensional spec.
func vectorLen(s *pb.TensorSpec) (int, error) {
	if sh := s.GetShape(); len(sh) != 1 || sh[0] <= 0 {
		return 0, fmt.Errorf("shape %v, want one fixed dimension", sh)
	}
	return int(s.GetShape()[0]), nil
}

// readAction reads the world's action: the one named "action", or its only action. An
// integer scalar in [0, N−1] is discrete; a float vector with bounds is continuous.
func readAction(actions map[uint64]*pb.TensorSpec) (actionSpec, error) {
	var uid uint64
	var spec *pb.TensorSpec
	for u, s := range actions {
		if s.GetName() == ActionName || len(actions) == 1 {
			uid, spec = u, s
		}
	}
	if spec == nil {
		return actionSpec{}, fmt.Errorf("no action %q among %d actions", ActionName, len(actions))
	}
	a := actionSpec{uid: uid, dtype: spec.GetDtype()}
	lo, err1 := boundValues(spec.GetMin())
	hi, err2 := boundValues(spec.GetMax())
	if err := errors.Join(err1, err2); err != nil {
		return a, fmt.Errorf("action %q bounds: %w", spec.GetName(), err)
	}
	switch a.dtype {
	case pb.DataType_DOUBLE, pb.DataType_FLOAT:
		n, err := vectorLen(spec)
		if err != nil {
			return a, fmt.Errorf("action %q: %w", spec.GetName(), err)
		}
		lo, err1 = broadcast(lo, spec.GetShape())
		hi, err2 = broadcast(hi, spec.GetShape())
		if err := errors.Join(err1, err2); err != nil || len(lo) != n {
			return a, fmt.Errorf("action %q needs min and max bounds (one, or one per element)", spec.GetName())
		}
		a.space = engine.ActionSpace{Low: lo, High: hi}
	case pb.DataType_INT8, pb.DataType_INT32, pb.DataType_INT64, pb.DataType_UINT8, pb.DataType_UINT32, pb.DataType_UINT64:
		if sh := spec.GetShape(); len(sh) > 1 || (len(sh) == 1 && sh[0] != 1) {
			return a, fmt.Errorf("action %q has shape %v; a discrete action is one integer", spec.GetName(), sh)
		}
		if len(lo) != 1 || len(hi) != 1 || lo[0] != 0 || hi[0] < 1 {
			return a, fmt.Errorf("action %q needs bounds min 0 and max N−1 ≥ 1, has %v and %v", spec.GetName(), lo, hi)
		}
		a.space = engine.ActionSpace{N: int(hi[0]) + 1}
	default:
		return a, fmt.Errorf("action %q has type %s; want a float vector or an integer", spec.GetName(), a.dtype)
	}
	return a, nil
}

// boundValues reads a TensorSpec bound as float64s.
func boundValues(v *pb.TensorSpec_Value) ([]float64, error) {
	var t pb.Tensor
	switch p := v.GetPayload().(type) {
	case nil:
		return nil, nil
	case *pb.TensorSpec_Value_Doubles:
		t.Payload = &pb.Tensor_Doubles{Doubles: p.Doubles}
	case *pb.TensorSpec_Value_Floats:
		t.Payload = &pb.Tensor_Floats{Floats: p.Floats}
	case *pb.TensorSpec_Value_Int8S:
		t.Payload = &pb.Tensor_Int8S{Int8S: p.Int8S}
	case *pb.TensorSpec_Value_Int32S:
		t.Payload = &pb.Tensor_Int32S{Int32S: p.Int32S}
	case *pb.TensorSpec_Value_Int64S:
		t.Payload = &pb.Tensor_Int64S{Int64S: p.Int64S}
	case *pb.TensorSpec_Value_Uint8S:
		t.Payload = &pb.Tensor_Uint8S{Uint8S: p.Uint8S}
	case *pb.TensorSpec_Value_Uint32S:
		t.Payload = &pb.Tensor_Uint32S{Uint32S: p.Uint32S}
	case *pb.TensorSpec_Value_Uint64S:
		t.Payload = &pb.Tensor_Uint64S{Uint64S: p.Uint64S}
	}
	t.Shape = []int32{-1}
	return AsFloat64s(&t)
}

// roundTrip sends reqs and receives one response each. A response that is an error fails
// the call with the server's status; a failed or timed-out stream is a lostError.
func (e *Env) roundTrip(reqs ...*pb.EnvironmentRequest) ([]*pb.EnvironmentResponse, error) {
	watchdog := time.AfterFunc(e.cfg.Timeout, e.cancel)
	defer watchdog.Stop()
	for _, r := range reqs {
		if err := e.stream.Send(r); err != nil {
			return nil, lostError{err}
		}
	}
	out := make([]*pb.EnvironmentResponse, len(reqs))
	var failed error
	for i := range reqs {
		resp, err := e.stream.Recv()
		if err != nil {
			return nil, lostError{err}
		}
		if st := resp.GetError(); st != nil && failed == nil {
			failed = status.ErrorProto(st)
		}
		out[i] = resp
	}
	return out, failed
}

// reconnect reconnects after a lost stream, or panics with an error wrapping ErrUnavailable.
// The running episode is gone: the next Step ends it.
func (e *Env) reconnect(cause error) {
	t0 := time.Now()
	if err := e.connectRetrying(context.Background()); err != nil {
		panic(fmt.Errorf("remote env %s: lost (%v), and reconnecting failed: %w", e.cfg.Address, cause, err))
	}
	e.restart = true
	msg := fmt.Sprintf("remote env %s: lost (%v); reconnected after %s to new world %q, the running episode ended truncated",
		e.cfg.Address, cause, time.Since(t0).Round(time.Millisecond), e.world)
	if e.cfg.Warn != nil {
		e.cfg.Warn(msg)
	} else {
		log.Print(msg)
	}
}

// mustSucceed panics on an error the server answered: an action or a setting it refused
// is a bug of the caller or the server, not an outage.
func (e *Env) mustSucceed(what string, err error) {
	if err != nil {
		panic(fmt.Errorf("remote env %s world %q: %s: %w", e.cfg.Address, e.world, what, err))
	}
}

// ObsDim implements engine.Env: the length of observation "state".
func (e *Env) ObsDim() int { return e.obs.obsDim }

// ActionSpace implements engine.Env.
func (e *Env) ActionSpace() engine.ActionSpace { return e.act.space }

// Reset implements engine.Env: it starts an episode with seed rng.Uint64() (the server
// resets from ResetRNG(seed)).
func (e *Env) Reset(rng *rand.Rand) []float64 {
	return e.begin(Settings{SettingSeed: Uint64(rng.Uint64())})
}

// ResetTo starts task's fixed initial state init (a tabletop world's evaluation protocol).
func (e *Env) ResetTo(task, init int) []float64 {
	return e.begin(Settings{SettingTask: Int64(int64(task)), SettingInitState: Int64(int64(init))})
}

// begin sends a Reset with settings and the step that starts the sequence, in one round
// trip, and returns the first observation.
func (e *Env) begin(settings Settings) []float64 {
	reset := &pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_Reset_{Reset_: &pb.ResetRequest{Settings: settings}}}
	first := &pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_Step{Step: &pb.StepRequest{RequestedObservations: e.resetObs}}}
	for {
		resp, err := e.roundTrip(reset, first)
		var lost lostError
		if errors.As(err, &lost) {
			e.reconnect(err)
			continue
		}
		e.mustSucceed("reset", err)
		e.restart = false
		r, err := e.read(resp[1].GetStep())
		e.mustSucceed("reset", err)
		return r.Obs
	}
}

// Step implements engine.Env.
func (e *Env) Step(action []float64) engine.StepResult {
	if e.restart {
		e.restart = false
		return engine.StepResult{Obs: slices.Clone(e.last), Truncated: true}
	}
	req := e.stepReq.GetStep()
	setAction(req.Actions[e.act.uid], action)
	t0 := time.Now()
	resp, err := e.roundTrip(e.stepReq)
	if e.cfg.Meter != nil {
		e.cfg.Meter.step(time.Since(t0))
	}
	var lost lostError
	if errors.As(err, &lost) {
		e.reconnect(err)
		e.restart = false
		return engine.StepResult{Obs: slices.Clone(e.last), Truncated: true}
	}
	e.mustSucceed("step", err)
	r, err := e.read(resp[0].GetStep())
	e.mustSucceed("step", err)
	return r
}

// read decodes a step response.
func (e *Env) read(s *pb.StepResponse) (engine.StepResult, error) {
	var r engine.StepResult
	o := s.GetObservations()
	obs, err := AsFloat64s(o[e.obs.state])
	if err != nil || len(obs) != e.obs.obsDim {
		return r, fmt.Errorf("observation %q: %d values (%v), want %d", ObsState, len(obs), err, e.obs.obsDim)
	}
	if r.Reward, err = scalar(o[e.obs.reward]); err != nil {
		return r, fmt.Errorf("observation %q: %w", ObsReward, err)
	}
	switch s.GetState() {
	case pb.EnvironmentStateType_RUNNING:
	case pb.EnvironmentStateType_TERMINATED:
		r.Terminated = true
	case pb.EnvironmentStateType_INTERRUPTED:
		r.Truncated = true
	default:
		return r, fmt.Errorf("step answered state %s", s.GetState())
	}
	if (r.Terminated || r.Truncated) && e.obs.hasSuccess {
		r.HasSuccess = true
		if r.Success, err = AsBool(o[e.obs.success]); err != nil {
			return r, fmt.Errorf("observation %q: %w", ObsSuccess, err)
		}
	}
	if e.cfg.Frames {
		f, err := AsBytes(o[e.obs.frame])
		if err != nil || len(f) != e.obs.frameBytes {
			return r, fmt.Errorf("observation %q: %d bytes (%v), want %d", ObsFrame, len(f), err, e.obs.frameBytes)
		}
		e.frame = f
	}
	if t, ok := o[e.obs.instruction]; ok && e.obs.hasInstruction {
		if v, err := AsStrings(t); err == nil && len(v) == 1 {
			e.instruction = v[0]
		}
	}
	r.Obs, e.last = obs, obs
	return r, nil
}

// HasSuccess says the world reports success ("success"); tasks without a goal have none.
func (e *Env) HasSuccess() bool { return e.obs.hasSuccess }

// Instruction is the language instruction of the running episode ("" when the world has
// none).
func (e *Env) Instruction() string { return e.instruction }

// World is the name of the world the client joined (a new one after a reconnection).
func (e *Env) World() string { return e.world }

// Frames returns the environment as an engine.FrameEnv, or nil when it was dialled without
// Config.Frames.
func (e *Env) Frames() engine.FrameEnv {
	if !e.cfg.Frames {
		return nil
	}
	return framed{e}
}

// framed is an Env with its frames.
type framed struct{ *Env }

// FrameBytes implements engine.FrameEnv.
func (f framed) FrameBytes() int { return f.obs.frameBytes }

// Frame implements engine.FrameEnv.
func (f framed) Frame(dst []byte) []byte { return append(dst, f.frame...) }

// Conform checks the world against what the caller's config expects: the observation
// width, the action space and the frame size (0: no frames); the error names the mismatch.
func (e *Env) Conform(obsDim int, space engine.ActionSpace, frameBytes int) error {
	prefix := fmt.Sprintf("remote env %s world %q", e.cfg.Address, e.world)
	switch got := e.act.space; {
	case e.obs.obsDim != obsDim:
		return fmt.Errorf("%s: observation %q has %d values, the spec's env has %d", prefix, ObsState, e.obs.obsDim, obsDim)
	case got.N != space.N:
		return fmt.Errorf("%s: action %q has %s, the spec's env has %s", prefix, ActionName, describeSpace(got), describeSpace(space))
	case got.N == 0 && (!slices.Equal(got.Low, space.Low) || !slices.Equal(got.High, space.High)):
		return fmt.Errorf("%s: action %q is %s, the spec's env has %s", prefix, ActionName, describeSpace(got), describeSpace(space))
	case e.cfg.Frames && e.obs.frameBytes != frameBytes:
		return fmt.Errorf("%s: observation %q has %d bytes (shape %v), the spec's env has %d", prefix, ObsFrame,
			e.obs.frameBytes, e.specs.GetObservations()[e.obs.frame].GetShape(), frameBytes)
	}
	return nil
}

func describeSpace(s engine.ActionSpace) string {
	if s.N > 0 {
		return fmt.Sprintf("%d discrete choices", s.N)
	}
	return fmt.Sprintf("%d continuous dims within %v..%v", len(s.Low), s.Low, s.High)
}

// Close leaves the world; the server destroys it with the stream.
func (e *Env) Close() error {
	if e.stream != nil {
		_ = e.stream.CloseSend()
	}
	if e.cancel != nil {
		e.cancel()
	}
	return e.conn.Close()
}
