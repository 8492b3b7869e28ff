package bc

import (
	"fmt"
	"math"

	"github.com/accerl/accerl/kernels/vla"
	"github.com/accerl/accerl/testenv/tabletop"
)

// VLAScore is a VLAModel measured offline on demonstrations (the training
// ones, or held-out ones to tell overfitting from underfitting): the
// teacher-forced token cross-entropy and accuracy the training reports,
// and the error of the actions the policy would execute, decoded without
// teacher forcing exactly as [VLAActor] decodes them.
type VLAScore struct {
	Samples int `json:"samples"`
	// CrossEntropy is the mean one-hot cross-entropy per action token
	// (nats) with teacher forcing; Accuracy the share of tokens whose
	// teacher-forced argmax is the expert's bin.
	CrossEntropy float64 `json:"cross_entropy"`
	Accuracy     float64 `json:"token_accuracy"`
	// Decode is the rule the errors below were decoded with.
	Decode string `json:"decode"`
	// MAE* are mean absolute errors in action units (1 = 1.5 cm of
	// fingertip motion, the gripper's full command range is 2) between the
	// decoded actions and the expert's noise-free ones, over the first
	// Execute actions of each chunk: translation (dims 0–2), rotation (3–5)
	// and gripper (6); MAEFirst* over the chunk's first action only.
	MAETranslation      float64 `json:"mae_translation"`
	MAERotation         float64 `json:"mae_rotation"`
	MAEGripper          float64 `json:"mae_gripper"`
	MAEFirstTranslation float64 `json:"mae_first_translation"`
	// GripperWrong is the share of executed actions whose gripper command
	// has the other sign than the expert's (open instead of close, or back).
	GripperWrong float64 `json:"gripper_wrong"`
}

// Score measures m on up to maxSamples steps of demos (every step when
// maxSamples ≤ 0; otherwise a fixed, evenly strided subset), decoding with
// rule. The batches are of batch samples.
func (m *VLAModel) Score(demos []ImageDemo, maxSamples, batch int, rule vla.DecodeRule) (VLAScore, error) {
	mc := m.Net.Config()
	var obs []vla.Obs
	var tok [][]int
	var want [][][]float64
	total := 0
	for _, d := range demos {
		total += len(d.Actions)
	}
	stride := 1
	if maxSamples > 0 && total > maxSamples {
		stride = (total + maxSamples - 1) / maxSamples
	}
	k := 0
	for _, d := range demos {
		if len(d.Instr) > mc.MaxInstr {
			return VLAScore{}, fmt.Errorf("bc vla score: instruction of %d tokens, the model takes %d", len(d.Instr), mc.MaxInstr)
		}
		for i := range d.Actions {
			if k++; (k-1)%stride != 0 {
				continue
			}
			obs = append(obs, m.obs(d.Images[i], d.Instr, d.Proprio[i]))
			tok = append(tok, demoTokens(mc, &d, i, m.Chunk))
			want = append(want, d.chunk(i, m.Execute))
		}
	}
	if len(obs) == 0 {
		return VLAScore{}, fmt.Errorf("bc vla score: no samples")
	}
	batch = max(batch, 1)
	s := VLAScore{Samples: len(obs), Decode: rule.String()}
	var tape *vla.Tape[float32]
	var nTok, nAct float64
	for lo := 0; lo < len(obs); lo += batch {
		hi := min(lo+batch, len(obs))
		tape = m.Net.ForwardInto(tape, obs[lo:hi], tok[lo:hi])
		l, a, _ := vla.CrossEntropy(tape)
		n := float64(len(tape.Logp))
		s.CrossEntropy += l * n
		s.Accuracy += a * n
		nTok += n
		got, _, _ := m.Net.ActDecode(obs[lo:hi], nil, rule)
		for r, g := range got {
			acts := tokensToChunk(mc, g)
			for j, w := range want[lo+r] {
				a := acts[j]
				for d := range 3 {
					e := math.Abs(a[d] - w[d])
					s.MAETranslation += e
					if j == 0 {
						s.MAEFirstTranslation += e
					}
				}
				for d := 3; d < 6; d++ {
					s.MAERotation += math.Abs(a[d] - w[d])
				}
				s.MAEGripper += math.Abs(a[gripperDim] - w[gripperDim])
				if (a[gripperDim] > 0) != (w[gripperDim] > 0) {
					s.GripperWrong++
				}
				nAct++
			}
		}
	}
	s.CrossEntropy /= nTok
	s.Accuracy /= nTok
	s.MAETranslation /= 3 * nAct
	s.MAERotation /= 3 * nAct
	s.MAEGripper /= nAct
	s.GripperWrong /= nAct
	s.MAEFirstTranslation /= 3 * float64(len(obs))
	return s, nil
}

// SplitDemos splits demos into the first perTask episodes of every task
// (for training) and the rest (held out), keeping their order.
func SplitDemos(demos []ImageDemo, perTask int) (train, held []ImageDemo) {
	seen := map[int]int{}
	for _, d := range demos {
		if seen[d.Task] < perTask {
			train = append(train, d)
		} else {
			held = append(held, d)
		}
		seen[d.Task]++
	}
	return train, held
}

// gripperDim is the action's gripper command.
const gripperDim = tabletop.ActionDim - 1
