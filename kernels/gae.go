package kernels

import "fmt"

// GAE computes generalized advantage estimation (Schulman et al. 2016,
// "High-Dimensional Continuous Control Using Generalized Advantage
// Estimation", eq. 16) for ONE trajectory piece of T = len(rewards) steps
// that lies within a single episode:
//
//	δ_t = r_t + γ V_{t+1} − V_t,   with V_T = bootstrap
//	A_t = Σ_{l=0}^{T−1−t} (γλ)^l δ_{t+l}   (computed backwards: A_t = δ_t + γλ A_{t+1})
//	ret_t = A_t + V_t
//
// values[t] = V(o_t). bootstrap is V(o_T) when the piece was cut (rollout
// length reached) or the episode was truncated by a time limit, and 0 when
// the episode terminated at its last step. adv and ret are overwritten; all
// four slices must have length T.
func GAE(rewards, values []float64, bootstrap, gamma, lambda float64, adv, ret []float64) {
	t := len(rewards)
	if len(values) != t || len(adv) != t || len(ret) != t {
		panic(fmt.Sprintf("kernels: GAE: rewards, values, adv, ret have lengths %d, %d, %d, %d; want all equal",
			t, len(values), len(adv), len(ret)))
	}
	next, last := bootstrap, 0.0
	for i := t - 1; i >= 0; i-- {
		delta := rewards[i] + gamma*next - values[i]
		last = delta + gamma*lambda*last
		adv[i] = last
		ret[i] = last + values[i]
		next = values[i]
	}
}
