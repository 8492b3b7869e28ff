package envrpc_test

import (
	"context"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/accerl/accerl/envrpc"
	pb "github.com/accerl/accerl/envrpc/dmenvrpc"
	"github.com/accerl/accerl/envrpc/envrpctest"
	"github.com/accerl/accerl/testenv"
)

// rawStream is a bare dm_env_rpc stream, the way a Python client drives the protocol.
type rawStream struct {
	t *testing.T
	s pb.Environment_ProcessClient
}

func openRaw(t *testing.T, addr string) rawStream {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := pb.NewEnvironmentClient(conn).Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rawStream{t, s}
}

// do sends one request and returns its response; wantCode is the error code it must
// answer (codes.OK: none).
func (r rawStream) do(req *pb.EnvironmentRequest, wantCode codes.Code) *pb.EnvironmentResponse {
	r.t.Helper()
	if err := r.s.Send(req); err != nil {
		r.t.Fatal(err)
	}
	resp, err := r.s.Recv()
	if err != nil {
		r.t.Fatal(err)
	}
	if got := codes.Code(resp.GetError().GetCode()); got != wantCode {
		r.t.Fatalf("%v answered %v (%s), want code %v", req, got, resp.GetError().GetMessage(), wantCode)
	}
	return resp
}

func stepReq(actions map[uint64]*pb.Tensor, obs ...uint64) *pb.EnvironmentRequest {
	return &pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_Step{Step: &pb.StepRequest{Actions: actions, RequestedObservations: obs}}}
}

// TestProtocolStateTransitions drives the protocol as dm_env_rpc's Python DmEnvAdaptor does
// (a Reset without settings, then a step without actions to get the first observation) and
// checks the transitions and errors of its compliance suite: no step before joining, the
// first step of a sequence ignores actions, the last one is TERMINATED (or INTERRUPTED at
// the time limit), a joined world cannot be destroyed, an unknown one cannot be joined.
func TestProtocolStateTransitions(t *testing.T) {
	srv := envrpctest.Start(t)
	r := openRaw(t, srv.Addr)
	r.do(stepReq(nil), codes.FailedPrecondition)
	r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_JoinWorld{JoinWorld: &pb.JoinWorldRequest{WorldName: "nope"}}}, codes.NotFound)
	create := &pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_CreateWorld{CreateWorld: &pb.CreateWorldRequest{
		Settings: map[string]*pb.Tensor{envrpc.SettingWorld: envrpc.String(testenv.KindCartPole), envrpc.SettingSeed: envrpc.Int64(5),
			envrpc.SettingMaxEpisodeSteps: envrpc.Int64(1000)}}}}
	name := r.do(create, codes.OK).GetCreateWorld().GetWorldName()
	specs := r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_JoinWorld{JoinWorld: &pb.JoinWorldRequest{WorldName: name}}}, codes.OK).
		GetJoinWorld().GetSpecs()
	uids := map[string]uint64{}
	for uid, s := range specs.GetObservations() {
		uids[s.GetName()] = uid
	}
	for _, n := range []string{envrpc.ObsState, envrpc.ObsReward, envrpc.ObsSuccess} {
		if _, ok := uids[n]; !ok {
			t.Fatalf("cartpole specs lack observation %q: %v", n, specs)
		}
	}
	if _, ok := uids[envrpc.ObsFrame]; ok {
		t.Errorf("cartpole offers frames: %v", specs)
	}
	all := []uint64{uids[envrpc.ObsState], uids[envrpc.ObsReward], uids[envrpc.ObsSuccess]}
	reset := r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_Reset_{Reset_: &pb.ResetRequest{}}}, codes.OK)
	if !proto.Equal(reset.GetReset_().GetSpecs(), specs) {
		t.Errorf("reset specs differ from join specs")
	}
	r.do(stepReq(map[uint64]*pb.Tensor{1: envrpc.Int64(7)}, 999), codes.InvalidArgument)          // unknown observation uid
	first := r.do(stepReq(map[uint64]*pb.Tensor{1: envrpc.Int64(7)}, all...), codes.OK).GetStep() // invalid action, ignored
	if first.GetState() != pb.EnvironmentStateType_RUNNING || first.GetObservations()[uids[envrpc.ObsReward]].GetDoubles().GetArray()[0] != 0 {
		t.Fatalf("first step = %v", first)
	}
	// Without a seed the episode comes from the world's reset stream (CreateWorld's seed).
	local, _ := testenv.Make(testenv.KindCartPole, testenv.Options{MaxEpisodeSteps: 1000})
	if want := local.Reset(rand.New(rand.NewPCG(5, 0x656e7672706331))); !slices.Equal(first.GetObservations()[uids[envrpc.ObsState]].GetDoubles().GetArray(), want) {
		t.Errorf("first observation %v, want the world stream's %v", first.GetObservations()[uids[envrpc.ObsState]], want)
	}
	r.do(stepReq(map[uint64]*pb.Tensor{1: envrpc.Int64(2)}), codes.InvalidArgument) // out of range now that it counts
	r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_DestroyWorld{DestroyWorld: &pb.DestroyWorldRequest{WorldName: name}}}, codes.FailedPrecondition)
	left := &pb.Tensor{Payload: &pb.Tensor_Int32S{Int32S: &pb.Tensor_Int32Array{Array: []int32{0}}}} // as NumPy's int32
	var last *pb.StepResponse
	for range 1000 {
		last = r.do(stepReq(map[uint64]*pb.Tensor{1: left}, all...), codes.OK).GetStep()
		if last.GetState() != pb.EnvironmentStateType_RUNNING {
			break
		}
	}
	if last.GetState() != pb.EnvironmentStateType_TERMINATED || last.GetObservations()[uids[envrpc.ObsSuccess]].GetBools().GetArray()[0] {
		t.Fatalf("always pushing left ends %v, want TERMINATED without success", last)
	}
	if next := r.do(stepReq(nil, all...), codes.OK).GetStep(); next.GetState() != pb.EnvironmentStateType_RUNNING {
		t.Errorf("the step after TERMINATED starts a sequence, got %v", next.GetState())
	}
	// ResetWorld reseeds the world's reset stream and ends the sequence.
	r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_ResetWorld{ResetWorld: &pb.ResetWorldRequest{WorldName: name,
		Settings: map[string]*pb.Tensor{envrpc.SettingSeed: envrpc.Uint64(9)}}}}, codes.OK)
	again := r.do(stepReq(nil, all...), codes.OK).GetStep()
	if want := local.Reset(rand.New(rand.NewPCG(9, 0x656e7672706331))); again.GetState() != pb.EnvironmentStateType_RUNNING ||
		!slices.Equal(again.GetObservations()[uids[envrpc.ObsState]].GetDoubles().GetArray(), want) {
		t.Errorf("first step after ResetWorld{seed 9} = %v, want a sequence from %v", again, want)
	}
	r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_LeaveWorld{LeaveWorld: &pb.LeaveWorldRequest{}}}, codes.OK)
	r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_DestroyWorld{DestroyWorld: &pb.DestroyWorldRequest{WorldName: name}}}, codes.OK)
	resp := r.do(&pb.EnvironmentRequest{Payload: &pb.EnvironmentRequest_DestroyWorld{DestroyWorld: &pb.DestroyWorldRequest{WorldName: name}}}, codes.NotFound)
	if !strings.Contains(resp.GetError().GetMessage(), name) {
		t.Errorf("error %q does not name the world", resp.GetError().GetMessage())
	}
}

// withoutProperties is a server that refuses every extension request, like a dm_env_rpc
// server without the properties extension.
type withoutProperties struct {
	pb.UnimplementedEnvironmentServer
	inner *envrpc.Server
}

func (w withoutProperties) Process(s pb.Environment_ProcessServer) error {
	return w.inner.Process(refuseExtensions{s})
}

type refuseExtensions struct{ pb.Environment_ProcessServer }

func (r refuseExtensions) Recv() (*pb.EnvironmentRequest, error) {
	for {
		req, err := r.Environment_ProcessServer.Recv()
		if err != nil || req.GetExtension() == nil {
			return req, err
		}
		err = r.Send(&pb.EnvironmentResponse{Payload: &pb.EnvironmentResponse_Error{Error: status.New(codes.Unimplemented, "no extensions").Proto()}})
		if err != nil {
			return nil, err
		}
	}
}

// TestResumeWithoutStateRestartsEpisode checks the checkpoint of a server without property
// "state": the restored environment's first step ends the episode truncated on the
// checkpoint's observation, and the next reset plays normally.
func TestResumeWithoutStateRestartsEpisode(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	pb.RegisterEnvironmentServer(g, withoutProperties{inner: envrpc.NewServer(envrpc.BuiltinWorlds())})
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	cfg := envrpc.Config{Address: lis.Addr().String(), Settings: world(testenv.KindCartPole)}
	a := dial(t, cfg)
	a.Reset(rand.New(rand.NewPCG(1, 1)))
	obs := a.Step([]float64{1}).Obs
	b := restored(t, a, cfg)
	if r := b.Step([]float64{0}); !r.Truncated || !slices.Equal(r.Obs, obs) {
		t.Fatalf("first step after resume = %+v, want truncated on %v", r, obs)
	}
	b.Reset(rand.New(rand.NewPCG(1, 2)))
	if r := b.Step([]float64{0}); r.Truncated || r.Terminated {
		t.Errorf("step after the reset = %+v", r)
	}
}
