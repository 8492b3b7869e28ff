package specs

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/accerl/accerl/testenv/tabletop"
)

// Attribute paths the resource check blames.
const (
	pathHidden              = blockPolicy + "." + attrHidden
	pathBins                = blockPolicy + "." + attrBins
	pathWorkers             = blockPipeline + "." + attrWorkers
	pathEnvsPerWorker       = blockPipeline + "." + attrEnvsPerWorker
	pathMaxBatch            = blockPipeline + "." + blockInference + "." + attrMaxBatch
	pathObsHidden           = blockWorldModel + "." + attrObsHidden
	pathRewHidden           = blockWorldModel + "." + attrRewHidden
	pathOfflineTrajectories = blockWorldModel + "." + attrOfflineTrajectories
	pathHistory             = blockWorldModel + "." + attrHistory
	pathMaxEpisodeSteps     = blockEnv + "." + attrMaxEpisodeSteps
)

// MaxEnvironments bounds pipeline.workers × pipeline.envs_per_worker: every environment is
// a goroutine with its own simulator and buffers.
const MaxEnvironments = 4096

// defaultMachineMemory is assumed when the machine's memory cannot be read.
const defaultMachineMemory = 16 << 30

// machineMemory returns the bytes of memory of this machine: MemTotal of /proc/meminfo
// where there is one, else defaultMachineMemory. A variable so tests can fix it.
var machineMemory = func() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return defaultMachineMemory
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24576000 kB
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			if kb, err := strconv.ParseFloat(fields[1], 64); err == nil && kb > 0 {
				return kb * 1024
			}
		}
	}
	return defaultMachineMemory
}

// envFacts are the sizes of an environment kind that memory depends on.
type envFacts struct {
	obs     int // observation width
	actions int // discrete actions (categorical) or action dimensions (continuous)
}

// envSizes returns the observation width and action count of an environment kind; ok is
// false for an unknown kind.
func envSizes(kind string) (f envFacts, ok bool) {
	switch kind {
	case EnvCartPole:
		return envFacts{obs: 4, actions: 2}, true
	case EnvAcrobot:
		return envFacts{obs: 6, actions: 3}, true
	case EnvPendulum:
		return envFacts{obs: 3, actions: 1}, true
	case EnvMountainCarContinuous:
		return envFacts{obs: 2, actions: 1}, true
	case EnvTabletop:
		return envFacts{obs: 46, actions: 7}, true
	}
	return envFacts{}, false
}

// mlpParams is the number of weights and biases of a fully connected network with the
// given layer widths, in float64 to stay exact enough without overflowing.
func mlpParams(widths ...float64) float64 {
	n := 0.0
	for i := 1; i < len(widths); i++ {
		n += widths[i-1]*widths[i] + widths[i]
	}
	return n
}

func floats(in []int) []float64 {
	out := make([]float64, len(in))
	for i, x := range in {
		out[i] = float64(x)
	}
	return out
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// vlaMemory estimates the micro-VLA policy's memory (kernels/vla) for minibatches of rows:
//
//   - parameters: per camera a patch stem, its bias and position embeddings; the camera
//     embedding; token embedding and LM head (V × dim each, V the vocabulary with the words
//     and the bins action tokens); sequence positions; the proprio map; per block the
//     attention (4·dim² + 4·dim), the MLP (2·ratio·dim² + (ratio+1)·dim) and two layer norms;
//     the final norm and the value head. Each parameter costs 40 bytes in training (float32
//     value and gradient, float64 master, gradient and Adam's two moments) and 12 more in
//     the inference replica (float32 value, float64 copy);
//   - activations of a training minibatch, in float32: per layer and position about
//     (10 + 2·ratio)·dim values plus heads·seq attention probabilities, and per action token
//     the bins log-probabilities and probabilities.
func vlaMemory(c Config, rows float64) []memoryPart {
	v := c.Policy.VLA
	d, r := float64(v.Dim), float64(v.MLPRatio)
	s, p := float64(c.Env.ImageSize), float64(v.Patch)
	cams := float64(max(len(c.Env.Cameras), 1))
	bins := float64(max(c.Policy.Bins, 2))
	k, _ := c.Policy.Chunk()
	actTok := 7 * float64(k)
	const instr, proprio = 21, tabletop.ProprioDim // the longest tabletop instruction, in tokens
	vocab := max(float64(v.VocabSize), float64(len(tabletop.Vocabulary()))+2+bins)
	patches := 0.0
	if p > 0 {
		patches = (s / p) * (s / p)
	}
	seq := cams*patches + instr + 1 + actTok
	params := cams*(d*p*p*3+d+patches*d) + cams*d + 2*vocab*d + (instr+1+actTok)*d + d*proprio + d +
		float64(v.Layers)*(4*d*d+4*d+2*r*d*d+(r+1)*d+4*d) + 2*d + d + 1
	act := rows * seq * float64(v.Layers) * ((10+2*r)*d + float64(v.Heads)*seq) * 4
	act += rows * actTok * bins * 2 * 4
	return []memoryPart{{
		what:  fmt.Sprintf("the VLA policy's %.3g parameters with their gradients, float64 masters, Adam moments and inference replica", params),
		bytes: params * (40 + 12),
		paths: []string{pathVLA, pathBins, pathAction},
	}, {
		what:  "the activations of a VLA minibatch",
		bytes: act,
		paths: []string{pathVLA, pathBatchSteps, pathMaxBatch},
	}}
}

// memoryPart is one contributor to an arm's memory estimate.
type memoryPart struct {
	what  string   // "the policy's parameters, gradients and Adam moments"
	bytes float64  // estimated bytes
	paths []string // attribute paths that size it, for the diagnostic's subject
}

// estimateMemory estimates the peak memory of one run of c in bytes, by contributor. It
// counts what grows with the spec, not the Go runtime's fixed overhead:
//
//   - each float64 network (policy trunk, head and critic; world-model observation and
//     reward models) holds parameters, gradients and Adam's two moments: 4 × 8 bytes per
//     parameter;
//   - a minibatch and an inference batch keep two activations per hidden unit and row;
//   - replay holds replay_capacity steps of the observation, the action and a few scalars;
//   - each environment holds its state, and a tabletop one its camera images;
//   - the world model's offline data holds offline_trajectories full episodes.
func estimateMemory(c Config) []memoryPart {
	f, ok := envSizes(c.Env.Kind)
	if !ok {
		return nil
	}
	obs, acts := float64(f.obs), float64(f.actions)
	hidden := floats(c.Policy.Hidden)
	feat := obs
	if len(hidden) > 0 {
		feat = hidden[len(hidden)-1]
	}
	var head, outs float64
	switch c.Policy.Action {
	case ActionCategorical:
		outs = acts
		head = mlpParams(feat, outs)
	case ActionTokens:
		outs = acts * float64(c.Policy.Bins)
		head = mlpParams(feat, outs)
	default: // gaussian: the mean and a learned log-std per dimension
		outs = acts
		head = mlpParams(feat, outs) + acts
	}
	trunk := mlpParams(append([]float64{obs}, hidden...)...)
	critic := mlpParams(append(append([]float64{obs}, hidden...), 1)...)
	policy := trunk + head + critic
	const adamBytes = 4 * 8 // parameters, gradients, two Adam moments
	parts := []memoryPart{{
		what:  fmt.Sprintf("the policy's %.3g parameters with their gradients and Adam moments", policy),
		bytes: policy * adamBytes,
		paths: []string{pathHidden, pathBins, pathAction},
	}}

	rows := float64(c.Algorithm.BatchSteps) / float64(max(c.Algorithm.Minibatches, 1))
	rows = max(rows, float64(c.Pipeline.Inference.MaxBatch))
	if c.Policy.VLA != nil {
		parts = vlaMemory(c, rows)
	} else {
		parts = append(parts, memoryPart{
			what:  "the activations of a minibatch",
			bytes: rows * 2 * 2 * (sum(hidden) + outs) * 8,
			paths: []string{pathHidden, pathBatchSteps, pathMaxBatch},
		})
	}

	const stepScalars = 8 // reward, done, value, log-probability, version, ...
	stepBytes := (obs + acts + stepScalars) * 8
	if c.Env.Kind == EnvTabletop && c.Env.Pixels {
		// Every stored step keeps its frame: the cameras' RGB bytes.
		stepBytes += float64(c.Env.ImageSize) * float64(c.Env.ImageSize) * 3 * float64(max(len(c.Env.Cameras), 1))
	}
	parts = append(parts, memoryPart{
		what:  "the replay buffer",
		bytes: float64(c.Pipeline.ReplayCapacity) * stepBytes,
		paths: []string{pathReplayCapacity},
	})

	envs := float64(c.Pipeline.Workers) * float64(c.Pipeline.EnvsPerWorker)
	perEnv := 64 << 10 // state, scratch, a chunk of its own
	envBytes := float64(perEnv) + float64(c.Pipeline.ChunkSteps)*stepBytes
	if c.Env.Kind == EnvTabletop {
		px := float64(c.Env.ImageSize) * float64(c.Env.ImageSize) * 3
		envBytes += px * float64(max(len(c.Env.Cameras), 1)) * 8
	}
	parts = append(parts, memoryPart{
		what:  fmt.Sprintf("%.3g environments", envs),
		bytes: envs * envBytes,
		paths: []string{pathWorkers, pathEnvsPerWorker},
	})

	if w := c.WorldModel; w.Enabled {
		in := float64(w.History)*obs + acts
		obsModel := mlpParams(append(append([]float64{in}, floats(w.ObsHidden)...), obs)...)
		rewModel := mlpParams(append(append([]float64{in}, floats(w.RewHidden)...), 1)...)
		parts = append(parts, memoryPart{
			what:  fmt.Sprintf("the world model's %.3g parameters with their gradients and Adam moments", obsModel+rewModel),
			bytes: (obsModel + rewModel) * adamBytes,
			paths: []string{pathObsHidden, pathRewHidden, pathHistory},
		})
		parts = append(parts, memoryPart{
			what:  "the world model's offline episodes",
			bytes: float64(w.OfflineTrajectories) * float64(c.Env.MaxEpisodeSteps) * stepBytes,
			paths: []string{pathOfflineTrajectories, pathMaxEpisodeSteps},
		})
	}
	return parts
}

// checkResources reports an arm that cannot run on this machine: more environments than
// MaxEnvironments, or an estimated memory (estimateMemory) above the machine's, naming the
// estimate and its biggest contributor, so the spec fails at validate and not under the
// kernel's out-of-memory killer.
func checkResources(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	envs := float64(c.Pipeline.Workers) * float64(c.Pipeline.EnvsPerWorker)
	if envs > MaxEnvironments {
		add(src.blame(pathWorkers, pathEnvsPerWorker), "Too many environments",
			fmt.Sprintf("pipeline.workers × pipeline.envs_per_worker is %d × %d = %.4g environments; at most %d are supported, because every environment runs in its own goroutine with its own simulator. Lower workers or envs_per_worker.",
				c.Pipeline.Workers, c.Pipeline.EnvsPerWorker, envs, MaxEnvironments))
		return
	}
	parts := estimateMemory(c)
	if len(parts) == 0 {
		return
	}
	total := 0.0
	for _, p := range parts {
		total += p.bytes
	}
	have := machineMemory()
	if total <= have {
		return
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].bytes > parts[j].bytes })
	big := parts[0]
	add(src.blame(big.paths...), "Spec needs more memory than this machine has",
		fmt.Sprintf("One run needs an estimated %s, most of it (%s) for %s, and this machine has %s. Make it smaller (narrower or fewer layers, a smaller replay or fewer environments).",
			formatBytes(total), formatBytes(big.bytes), big.what, formatBytes(have)))
}

// formatBytes writes n bytes with a binary unit: "13.4 GiB".
func formatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.3g %s", n, units[i])
}
