package bc

import (
	"fmt"
	"math"
	"strings"
)

// FoldedParams returns the model's parameters re-expressed for a policy of the same shape
// that reads the unstandardised features (Features of the raw observation) instead of the
// standardised ones, with the gaussian head's log-std set to logStd for every dimension:
// the warm start an RL engine, which feeds its policy the features as they are, loads.
//
// Standardising is affine, x̂_j = (x_j − μ_j)/σ_j, so the first layer of the actor and of
// the critic absorbs it exactly: W'[o][j] = W[o][j]/σ_j and b'[o] = b[o] − Σ_j W[o][j]μ_j/σ_j.
// Every later layer is unchanged, so the folded policy's mean action is the model's, up to
// floating-point rounding.
func (m *Model) FoldedParams(logStd float64) ([]float64, error) {
	if math.IsNaN(logStd) || math.IsInf(logStd, 0) {
		return nil, fmt.Errorf("fold bc model: log std %v is not finite", logStd)
	}
	p := append([]float64(nil), m.Policy.Params()...)
	mean, std := m.Norm.Mean, m.Norm.Std
	folded := 0
	spans := m.Policy.Layout()
	for i, s := range spans {
		switch {
		case s.Name == "actor_logstd":
			for k := range s.Size() {
				p[s.Offset+k] = logStd
			}
		case (s.Name == "actor_mean.0.weight" || s.Name == "critic.0.weight") && i+1 < len(spans):
			out, in := s.Shape[0], s.Shape[1]
			if in != len(mean) {
				return nil, fmt.Errorf("fold bc model: %s reads %d features, the normaliser has %d", s.Name, in, len(mean))
			}
			bias := spans[i+1]
			if !strings.HasSuffix(bias.Name, ".bias") || bias.Size() != out {
				return nil, fmt.Errorf("fold bc model: %s is not followed by its bias", s.Name)
			}
			for o := range out {
				w := p[s.Offset+o*in : s.Offset+(o+1)*in]
				shift := 0.0
				for j := range w {
					shift += w[j] * mean[j] / std[j]
					w[j] /= std[j]
				}
				p[bias.Offset+o] -= shift
			}
			folded++
		}
	}
	if folded != 2 {
		return nil, fmt.Errorf("fold bc model: found %d of the actor's and critic's input layers, want 2 (a policy without hidden layers?)", folded)
	}
	return p, nil
}
