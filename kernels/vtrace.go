package kernels

import (
	"fmt"
	"math"
)

// VTrace computes IMPALA's v-trace targets and policy-gradient advantages
// (Espeholt et al. 2018, "IMPALA: Scalable Distributed Deep-RL with
// Importance Weighted Actor-Learner Architectures", eq. 1 and section 4.2)
// for ONE trajectory piece of T = len(rewards) steps within a single
// episode, collected by a behaviour policy μ and evaluated under π:
//
//	ρ_t = min(ρ̄, π(a_t|x_t)/μ(a_t|x_t)),   c_t = min(c̄, π(a_t|x_t)/μ(a_t|x_t))
//	δ_t = ρ_t (r_t + γ V(x_{t+1}) − V(x_t)),   with V(x_T) = bootstrap
//	v_t = V(x_t) + δ_t + γ c_t (v_{t+1} − V(x_{t+1})),   with v_T = bootstrap
//	A_t = ρ_t (r_t + γ v_{t+1} − V(x_t))
//
// logRhos[t] = log π(a_t|x_t) − log μ(a_t|x_t) (for several tokens per
// step, the sum over the step's tokens: the ratio of the joint action
// probability), values[t] = V(x_t) under the current parameters, bootstrap
// = V(x_T) when the piece was cut or truncated by a time limit and 0 when
// the episode terminated at its last step. vs receives the value targets
// v_t and pgAdv the advantages A_t; both are overwritten and all slices
// must have length T. With π = μ and ρ̄, c̄ ≥ 1 the targets are the
// discounted n-step returns Σ_k γ^k r_{t+k} + γ^{T−t} bootstrap.
func VTrace(logRhos, rewards, values []float64, bootstrap, gamma, rhoBar, cBar float64, vs, pgAdv []float64) {
	t := len(rewards)
	if len(logRhos) != t || len(values) != t || len(vs) != t || len(pgAdv) != t {
		panic(fmt.Sprintf("kernels: VTrace: logRhos, rewards, values, vs, pgAdv have lengths %d, %d, %d, %d, %d; want all equal",
			len(logRhos), t, len(values), len(vs), len(pgAdv)))
	}
	nextV, nextVs := bootstrap, bootstrap // V(x_{t+1}) and v_{t+1}
	for i := t - 1; i >= 0; i-- {
		ratio := math.Exp(logRhos[i])
		rho, c := math.Min(rhoBar, ratio), math.Min(cBar, ratio)
		delta := rho * (rewards[i] + gamma*nextV - values[i])
		pgAdv[i] = rho * (rewards[i] + gamma*nextVs - values[i])
		vs[i] = values[i] + delta + gamma*c*(nextVs-nextV)
		nextV, nextVs = values[i], vs[i]
	}
}
