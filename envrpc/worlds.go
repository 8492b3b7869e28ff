package envrpc

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	pb "github.com/accerl/accerl/envrpc/dmenvrpc"
	"github.com/accerl/accerl/testenv"
	"github.com/accerl/accerl/testenv/tabletop"
)

// Observation and action names of a world's specs. Clients find them by name; the uids are
// this server's choice.
const (
	ObsState       = "state"       // float64 [obs dim]
	ObsReward      = "reward"      // float64 scalar, the last step's reward (0 on a first step)
	ObsSuccess     = "success"     // bool scalar, on a step that ends a sequence: the goal was reached
	ObsFrame       = "frame"       // uint8 [cameras, H, W, 3], worlds with pixels
	ObsInstruction = "instruction" // string scalar, tabletop worlds
	ActionName     = "action"      // float64 [dims] with min/max, or an int64 scalar in [0, N)
)

const (
	uidAction uint64 = 1

	uidState       uint64 = 1
	uidReward      uint64 = 2
	uidSuccess     uint64 = 3
	uidFrame       uint64 = 4
	uidInstruction uint64 = 5
)

// World is one simulator a Server steps: a testenv.Env, and what it offers besides.
type World struct {
	// Env is the simulator: its state vector, action space, rewards and episode ends.
	Env testenv.Env
	// Frame, when set, appends the RGB frame of the current state (FrameShape, row-major) to
	// dst; the world then offers the "frame" observation.
	Frame      func(dst []byte) []byte
	FrameShape []int32
	// Instruction, when set, returns the running episode's language instruction.
	Instruction func() string
	// ResetTo, when set, starts an episode from fixed initial state init of task (Reset
	// settings "task" and "init_state": an evaluation protocol's starting points).
	ResetTo func(task, init int) []float64
}

// MakeWorld builds a world from the settings of a CreateWorld request, without "world"
// and "seed", which the server reads.
type MakeWorld func(Settings) (World, error)

// BuiltinWorlds returns accerl's simulators by world name: testenv's classic-control tasks
// (testenv.Make; setting max_episode_steps) and the tabletop suites ("tabletop": tabletop.New
// with suite, tasks, image_size, cameras, max_episode_steps, and pixels to offer frames).
func BuiltinWorlds() map[string]MakeWorld {
	w := map[string]MakeWorld{WorldTabletop: makeTabletop}
	for _, kind := range testenv.Kinds() {
		w[kind] = func(s Settings) (World, error) {
			if err := s.Check(SettingMaxEpisodeSteps); err != nil {
				return World{}, err
			}
			steps, err := s.Int(SettingMaxEpisodeSteps, 0)
			if err != nil {
				return World{}, err
			}
			env, err := testenv.Make(kind, testenv.Options{MaxEpisodeSteps: steps})
			return World{Env: env}, err
		}
	}
	return w
}

// WorldTabletop is the world name of the tabletop suites.
const WorldTabletop = "tabletop"

// WorldNames returns the names of worlds, sorted.
func WorldNames(worlds map[string]MakeWorld) []string {
	return slices.Sorted(maps.Keys(worlds))
}

// TabletopSettings are the CreateWorld settings of a tabletop world; zero fields are the
// suite's defaults, and Pixels offers the cameras' frames.
func TabletopSettings(cfg tabletop.Config, pixels bool) Settings {
	s := Settings{SettingWorld: String(WorldTabletop), SettingSuite: String(cfg.Suite), SettingPixels: Bool(pixels)}
	if len(cfg.Tasks) > 0 {
		t := make([]int64, len(cfg.Tasks))
		for i, v := range cfg.Tasks {
			t[i] = int64(v)
		}
		s[SettingTasks] = Int64s(t...)
	}
	if cfg.ImageSize > 0 {
		s[SettingImageSize] = Int64(int64(cfg.ImageSize))
	}
	if len(cfg.Cameras) > 0 {
		s[SettingCameras] = Strings(cfg.Cameras...)
	}
	if cfg.MaxEpisodeSteps > 0 {
		s[SettingMaxEpisodeSteps] = Int64(int64(cfg.MaxEpisodeSteps))
	}
	return s
}

func makeTabletop(s Settings) (World, error) {
	if err := s.Check(SettingSuite, SettingTasks, SettingImageSize, SettingCameras, SettingPixels, SettingMaxEpisodeSteps); err != nil {
		return World{}, err
	}
	suite, err1 := s.String(SettingSuite, tabletop.SuiteSpatial)
	tasks, err2 := s.Ints(SettingTasks)
	size, err3 := s.Int(SettingImageSize, 0)
	cams, err4 := s.Strings(SettingCameras)
	steps, err5 := s.Int(SettingMaxEpisodeSteps, 0)
	pixels, err6 := s.Bool(SettingPixels)
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return World{}, err
	}
	env, err := tabletop.New(tabletop.Config{Suite: suite, Tasks: tasks, ImageSize: size, Cameras: cams, MaxEpisodeSteps: steps})
	if err != nil {
		return World{}, err
	}
	w := World{Env: env, Instruction: env.Instruction, ResetTo: env.ResetTo}
	if pixels {
		c := env.Config()
		w.FrameShape = []int32{int32(len(c.Cameras)), int32(c.ImageSize), int32(c.ImageSize), 3}
		w.Frame = func(dst []byte) []byte {
			for _, im := range env.Images() {
				dst = append(dst, im...)
			}
			return dst
		}
	}
	return w, nil
}

// specs are the world's actions and observations.
func (w World) specs() *pb.ActionObservationSpecs {
	obs := map[uint64]*pb.TensorSpec{
		uidState:  {Name: ObsState, Shape: []int32{int32(w.Env.ObsDim())}, Dtype: pb.DataType_DOUBLE},
		uidReward: {Name: ObsReward, Dtype: pb.DataType_DOUBLE},
	}
	if _, ok := w.Env.Succeeded(false, true); ok {
		obs[uidSuccess] = &pb.TensorSpec{Name: ObsSuccess, Dtype: pb.DataType_BOOL}
	}
	if w.Frame != nil {
		obs[uidFrame] = &pb.TensorSpec{Name: ObsFrame, Shape: w.FrameShape, Dtype: pb.DataType_UINT8,
			Min: &pb.TensorSpec_Value{Payload: &pb.TensorSpec_Value_Uint8S{Uint8S: &pb.Tensor_Uint8Array{Array: []byte{0}}}},
			Max: &pb.TensorSpec_Value{Payload: &pb.TensorSpec_Value_Uint8S{Uint8S: &pb.Tensor_Uint8Array{Array: []byte{255}}}}}
	}
	if w.Instruction != nil {
		obs[uidInstruction] = &pb.TensorSpec{Name: ObsInstruction, Dtype: pb.DataType_STRING}
	}
	return &pb.ActionObservationSpecs{Actions: map[uint64]*pb.TensorSpec{uidAction: actionTensorSpec(w.Env.ActionSpace())}, Observations: obs}
}

// actionTensorSpec is a discrete space as an int64 scalar in [0, N−1], a continuous one as a
// float64 vector within [Low, High].
func actionTensorSpec(a testenv.ActionSpace) *pb.TensorSpec {
	if a.N > 0 {
		return &pb.TensorSpec{Name: ActionName, Dtype: pb.DataType_INT64,
			Min: &pb.TensorSpec_Value{Payload: &pb.TensorSpec_Value_Int64S{Int64S: &pb.Tensor_Int64Array{Array: []int64{0}}}},
			Max: &pb.TensorSpec_Value{Payload: &pb.TensorSpec_Value_Int64S{Int64S: &pb.Tensor_Int64Array{Array: []int64{int64(a.N - 1)}}}}}
	}
	return &pb.TensorSpec{Name: ActionName, Shape: []int32{int32(len(a.Low))}, Dtype: pb.DataType_DOUBLE,
		Min: &pb.TensorSpec_Value{Payload: &pb.TensorSpec_Value_Doubles{Doubles: &pb.Tensor_DoubleArray{Array: a.Low}}},
		Max: &pb.TensorSpec_Value{Payload: &pb.TensorSpec_Value_Doubles{Doubles: &pb.Tensor_DoubleArray{Array: a.High}}}}
}

// action reads the action tensor of a step into testenv's form.
func (w World) action(t *pb.Tensor) ([]float64, error) {
	space := w.Env.ActionSpace()
	if space.N > 0 {
		v, err := AsInts(t)
		switch {
		case err != nil:
			return nil, fmt.Errorf("action: %w", err)
		case len(v) != 1 || v[0] < 0 || v[0] >= space.N:
			return nil, fmt.Errorf("action %v is not one integer in [0, %d)", v, space.N)
		}
		return []float64{float64(v[0])}, nil
	}
	v, err := AsFloat64s(t)
	switch {
	case err != nil:
		return nil, fmt.Errorf("action: %w", err)
	case len(v) != len(space.Low):
		return nil, fmt.Errorf("action has %d values, want %d", len(v), len(space.Low))
	}
	return v, nil
}
