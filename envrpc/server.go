package envrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"

	pb "github.com/accerl/accerl/envrpc/dmenvrpc"
	"github.com/accerl/accerl/envrpc/dmenvrpc/properties"
	"github.com/accerl/accerl/testenv"
)

// PropertyState is the property (dm_env_rpc's properties extension) that holds a world's
// complete state as bytes: its simulator's MarshalBinary, whether a sequence is running and
// its reset stream. Reading it and writing it back restores the world bit-identically.
const PropertyState = "state"

// resetStream is the PCG stream of an episode's seed (ResetRNG).
const resetStream = 0x656e7672706331 // "envrpc1"

// ResetRNG is the generator a world resets from given the seed of a Reset request: the
// in-process simulator reset with ResetRNG(seed) starts the same episode as a remote one.
func ResetRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, resetStream)) }

// Server serves worlds over dm_env_rpc's bidirectional stream (service Environment, method
// Process). Each stream creates and joins worlds; a world is joined by one stream at a time
// and destroyed when the stream that created it ends. Requests of a stream are answered in
// order, one response each; a failed request answers a google.rpc.Status and the stream
// stays open.
type Server struct {
	pb.UnimplementedEnvironmentServer
	makers map[string]MakeWorld

	mu     sync.Mutex
	worlds map[string]*world
	next   int
}

// NewServer returns a server of the worlds makers builds (BuiltinWorlds for accerl's own).
func NewServer(makers map[string]MakeWorld) *Server {
	return &Server{makers: makers, worlds: map[string]*world{}}
}

// world is a created world and its sequence state. Its joined stream steps it under mu, and
// another stream's ResetWorld takes mu too; join and leave take the server's lock.
type world struct {
	World
	mu      sync.Mutex
	name    string
	specs   *pb.ActionObservationSpecs
	src     *rand.PCG // seeds the resets that bring no seed
	joined  bool
	running bool     // a sequence is running: the next step applies its action
	reset   Settings // the settings of the pending Reset, read when the next sequence starts
}

// session is one stream's view: the worlds it created and the one it joined.
type session struct {
	srv     *Server
	created []string
	joined  *world
}

// Process implements the Environment service.
func (s *Server) Process(stream pb.Environment_ProcessServer) error {
	ss := &session{srv: s}
	defer ss.end()
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(ss.handle(req)); err != nil {
			return err
		}
	}
}

// end leaves the joined world and destroys the worlds the stream created.
func (ss *session) end() {
	ss.srv.mu.Lock()
	defer ss.srv.mu.Unlock()
	if ss.joined != nil {
		ss.joined.joined = false
	}
	for _, name := range ss.created {
		delete(ss.srv.worlds, name)
	}
}

func (ss *session) handle(req *pb.EnvironmentRequest) *pb.EnvironmentResponse {
	if w := ss.joined; w != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
	}
	var resp pb.EnvironmentResponse
	var err error
	switch p := req.Payload.(type) {
	case *pb.EnvironmentRequest_Step:
		var r *pb.StepResponse
		r, err = ss.step(p.Step)
		resp.Payload = &pb.EnvironmentResponse_Step{Step: r}
	case *pb.EnvironmentRequest_Reset_:
		var r *pb.ResetResponse
		r, err = ss.resetSequence(p.Reset_)
		resp.Payload = &pb.EnvironmentResponse_Reset_{Reset_: r}
	case *pb.EnvironmentRequest_CreateWorld:
		var r *pb.CreateWorldResponse
		r, err = ss.createWorld(p.CreateWorld)
		resp.Payload = &pb.EnvironmentResponse_CreateWorld{CreateWorld: r}
	case *pb.EnvironmentRequest_JoinWorld:
		var r *pb.JoinWorldResponse
		r, err = ss.joinWorld(p.JoinWorld)
		resp.Payload = &pb.EnvironmentResponse_JoinWorld{JoinWorld: r}
	case *pb.EnvironmentRequest_ResetWorld:
		err = ss.resetWorld(p.ResetWorld)
		resp.Payload = &pb.EnvironmentResponse_ResetWorld{ResetWorld: &pb.ResetWorldResponse{}}
	case *pb.EnvironmentRequest_LeaveWorld:
		err = ss.leaveWorld()
		resp.Payload = &pb.EnvironmentResponse_LeaveWorld{LeaveWorld: &pb.LeaveWorldResponse{}}
	case *pb.EnvironmentRequest_DestroyWorld:
		err = ss.destroyWorld(p.DestroyWorld.GetWorldName())
		resp.Payload = &pb.EnvironmentResponse_DestroyWorld{DestroyWorld: &pb.DestroyWorldResponse{}}
	case *pb.EnvironmentRequest_Extension:
		var a *anypb.Any
		a, err = ss.extension(p.Extension)
		resp.Payload = &pb.EnvironmentResponse_Extension{Extension: a}
	default:
		err = status.Error(codes.Unimplemented, "empty or unknown request")
	}
	if err != nil {
		resp.Payload = &pb.EnvironmentResponse_Error{Error: status.Convert(err).Proto()}
	}
	return &resp
}

func (ss *session) createWorld(req *pb.CreateWorldRequest) (*pb.CreateWorldResponse, error) {
	set := Settings(req.GetSettings())
	name, err := set.String(SettingWorld, testenv.KindCartPole)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	seed, _, err := set.Seed(SettingSeed)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	build, ok := ss.srv.makers[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "unknown world %q (this server has: %v)", name, WorldNames(ss.srv.makers))
	}
	rest := Settings{}
	for k, v := range set {
		if k != SettingWorld && k != SettingSeed {
			rest[k] = v
		}
	}
	w, err := build(rest)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "create world %q: %v", name, err)
	}
	s := ss.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	wn := name + "-" + strconv.Itoa(s.next)
	s.worlds[wn] = &world{World: w, name: wn, specs: w.specs(), src: rand.NewPCG(seed, resetStream)}
	ss.created = append(ss.created, wn)
	return &pb.CreateWorldResponse{WorldName: wn}, nil
}

func (ss *session) joinWorld(req *pb.JoinWorldRequest) (*pb.JoinWorldResponse, error) {
	if ss.joined != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "already joined world %q; leave it first", ss.joined.name)
	}
	if err := Settings(req.GetSettings()).Check(); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	s := ss.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.worlds[req.GetWorldName()]
	switch {
	case !ok:
		return nil, status.Errorf(codes.NotFound, "no world %q", req.GetWorldName())
	case w.joined:
		return nil, status.Errorf(codes.FailedPrecondition, "world %q already has an agent", w.name)
	}
	w.joined, w.running, w.reset = true, false, nil
	ss.joined = w
	return &pb.JoinWorldResponse{Specs: w.specs}, nil
}

func (ss *session) leaveWorld() error {
	if ss.joined == nil {
		return nil
	}
	ss.srv.mu.Lock()
	defer ss.srv.mu.Unlock()
	ss.joined.joined = false
	ss.joined = nil
	return nil
}

func (ss *session) destroyWorld(name string) error {
	s := ss.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.worlds[name]
	switch {
	case !ok:
		return status.Errorf(codes.NotFound, "no world %q", name)
	case w.joined:
		return status.Errorf(codes.FailedPrecondition, "world %q still has an agent; leave it first", name)
	}
	delete(s.worlds, name)
	return nil
}

func (ss *session) resetWorld(req *pb.ResetWorldRequest) error {
	s := ss.srv
	s.mu.Lock()
	w, ok := s.worlds[req.GetWorldName()]
	s.mu.Unlock()
	if !ok {
		return status.Errorf(codes.NotFound, "no world %q", req.GetWorldName())
	}
	set := Settings(req.GetSettings())
	if err := set.Check(SettingSeed); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	seed, ok, err := set.Seed(SettingSeed)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	if w != ss.joined { // handle holds the joined world's lock
		w.mu.Lock()
		defer w.mu.Unlock()
	}
	if ok {
		w.src.Seed(seed, resetStream)
	}
	w.running = false
	return nil
}

func (ss *session) resetSequence(req *pb.ResetRequest) (*pb.ResetResponse, error) {
	w := ss.joined
	if w == nil {
		return nil, status.Error(codes.FailedPrecondition, "reset before joining a world")
	}
	set := Settings(req.GetSettings())
	if err := set.Check(SettingSeed, SettingTask, SettingInitState); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	_, hasTask := set[SettingTask]
	if _, hasInit := set[SettingInitState]; hasTask != hasInit || (hasTask && w.ResetTo == nil) {
		return nil, status.Errorf(codes.InvalidArgument, "settings %q and %q go together, and only on a world with fixed initial states", SettingTask, SettingInitState)
	}
	w.running, w.reset = false, set
	return &pb.ResetResponse{Specs: w.specs}, nil
}

// step applies the action of a running sequence, or starts a sequence.
func (ss *session) step(req *pb.StepRequest) (resp *pb.StepResponse, err error) {
	w := ss.joined
	if w == nil {
		return nil, status.Error(codes.FailedPrecondition, "step before joining a world")
	}
	// testenv panics on an action it cannot take (a non-finite value): answer an error and
	// keep serving.
	defer func() {
		if p := recover(); p != nil {
			err = status.Errorf(codes.InvalidArgument, "step: %v", p)
		}
	}()
	for _, uid := range req.GetRequestedObservations() {
		if _, ok := w.specs.Observations[uid]; !ok {
			return nil, status.Errorf(codes.InvalidArgument, "no observation uid %d", uid)
		}
	}
	resp = &pb.StepResponse{State: pb.EnvironmentStateType_RUNNING}
	var (
		obs                       []float64
		reward                    float64
		terminated, truncated, ok bool
	)
	if !w.running {
		if obs, err = w.start(); err != nil {
			return nil, err
		}
		w.running = true
	} else {
		t, found := req.GetActions()[uidAction]
		if !found {
			return nil, status.Errorf(codes.InvalidArgument, "step: no action (uid %d)", uidAction)
		}
		a, err := w.action(t)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		obs, reward, terminated, truncated = w.Env.Step(a)
		switch {
		case terminated:
			resp.State = pb.EnvironmentStateType_TERMINATED
		case truncated:
			resp.State = pb.EnvironmentStateType_INTERRUPTED
		}
		w.running = !terminated && !truncated
	}
	success := false
	if terminated || truncated {
		success, ok = w.Env.Succeeded(terminated, truncated)
		success = success && ok
	}
	if len(req.GetRequestedObservations()) > 0 {
		resp.Observations = make(map[uint64]*pb.Tensor, len(req.GetRequestedObservations()))
	}
	for _, uid := range req.GetRequestedObservations() {
		switch uid {
		case uidState:
			resp.Observations[uid] = Doubles(obs)
		case uidReward:
			resp.Observations[uid] = Double(reward)
		case uidSuccess:
			resp.Observations[uid] = Bool(success)
		case uidFrame:
			resp.Observations[uid] = Bytes(w.Frame(nil), w.FrameShape...)
		case uidInstruction:
			resp.Observations[uid] = String(w.Instruction())
		}
	}
	return resp, nil
}

// start begins a sequence with the pending Reset's settings: a fixed initial state, an
// episode seed, or the world's reset stream.
func (w *world) start() ([]float64, error) {
	set := w.reset
	w.reset = nil
	if _, ok := set[SettingTask]; ok {
		task, err1 := set.Int(SettingTask, 0)
		init, err2 := set.Int(SettingInitState, 0)
		if err := errors.Join(err1, err2); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		return w.ResetTo(task, init), nil // out of range panics, answered as an error
	}
	seed, ok, err := set.Seed(SettingSeed)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if ok {
		return w.Env.Reset(ResetRNG(seed)), nil
	}
	return w.Env.Reset(rand.New(w.src)), nil
}

// extension answers the properties extension: property "state" (PropertyState) is
// readable and writable.
func (ss *session) extension(a *anypb.Any) (*anypb.Any, error) {
	var req properties.PropertyRequest
	if err := a.UnmarshalTo(&req); err != nil {
		return nil, status.Errorf(codes.Unimplemented, "unsupported extension %s", a.GetTypeUrl())
	}
	w := ss.joined
	if w == nil {
		return nil, status.Error(codes.FailedPrecondition, "property request before joining a world")
	}
	var resp properties.PropertyResponse
	switch p := req.Payload.(type) {
	case *properties.PropertyRequest_ListProperty:
		resp.Payload = &properties.PropertyResponse_ListProperty{ListProperty: &properties.ListPropertyResponse{
			Values: []*properties.PropertySpec{{Spec: &pb.TensorSpec{Name: PropertyState, Shape: []int32{-1}, Dtype: pb.DataType_UINT8},
				IsReadable: true, IsWritable: true, Description: "the world's complete state (simulator, sequence, reset stream)"}}}}
	case *properties.PropertyRequest_ReadProperty:
		if p.ReadProperty.GetKey() != PropertyState {
			return nil, status.Errorf(codes.NotFound, "no property %q", p.ReadProperty.GetKey())
		}
		state, err := w.marshal()
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		resp.Payload = &properties.PropertyResponse_ReadProperty{ReadProperty: &properties.ReadPropertyResponse{Value: Bytes(state)}}
	case *properties.PropertyRequest_WriteProperty:
		if p.WriteProperty.GetKey() != PropertyState {
			return nil, status.Errorf(codes.NotFound, "no property %q", p.WriteProperty.GetKey())
		}
		b, err := AsBytes(p.WriteProperty.GetValue())
		if err == nil {
			err = w.unmarshal(b)
		}
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "write property %q: %v", PropertyState, err)
		}
		resp.Payload = &properties.PropertyResponse_WriteProperty{WriteProperty: &properties.WritePropertyResponse{}}
	default:
		return nil, status.Error(codes.Unimplemented, "empty property request")
	}
	return anypb.New(&resp)
}

const worldStateTag = "envrpc-world"

// marshal encodes the world's state; a pending Reset is not part of it (accerl's client
// sends a Reset and the step that starts the sequence together).
func (w *world) marshal() ([]byte, error) {
	env, err := w.Env.MarshalBinary()
	if err != nil {
		return nil, err
	}
	src, err := w.src.MarshalBinary()
	if err != nil {
		return nil, err
	}
	sw := testenv.NewStateWriter(worldStateTag)
	sw.Bool(w.running)
	sw.Bytes(src)
	sw.Bytes(env)
	return sw.Data(), nil
}

func (w *world) unmarshal(data []byte) error {
	r := testenv.NewStateReader(data, worldStateTag)
	running, src, env := r.Bool(), r.Bytes(), r.Bytes()
	if err := r.Done(); err != nil {
		return err
	}
	if err := w.src.UnmarshalBinary(src); err != nil {
		return err
	}
	if err := w.Env.UnmarshalBinary(env); err != nil {
		return err
	}
	w.running, w.reset = running, nil
	return nil
}

// CheckListen refuses a listen address that is not on the loopback interface unless the
// server uses TLS (tlsOn) or insecure: without TLS the server has no authentication, so
// anyone who reaches it can create worlds and read their state.
func CheckListen(addr string, tlsOn, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if tlsOn || insecure || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("listen address %q is not loopback, and without TLS the environment server has no authentication: give --tls-cert and --tls-key (and --tls-ca to accept only clients with certificates it signed), listen on 127.0.0.1, or pass --insecure on a network you trust", addr)
}

// Serve serves srv on lis until ctx is done, then stops, ending every stream. With tlsCfg
// (tlsfiles.Files.ServerConfig) the connections use TLS, and mutual TLS when it requires
// client certificates; nil is plaintext.
func Serve(ctx context.Context, lis net.Listener, srv *Server, tlsCfg *tls.Config) error {
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage)}
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	g := grpc.NewServer(opts...)
	pb.RegisterEnvironmentServer(g, srv)
	stop := context.AfterFunc(ctx, g.Stop)
	defer stop()
	if err := g.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve environments: %w", err)
	}
	return nil
}

// maxMessage bounds a message: frames of two 256×256 cameras and a state are under 1 MiB.
const maxMessage = 64 << 20
