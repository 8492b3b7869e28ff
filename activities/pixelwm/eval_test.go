package pixelwm

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/accerl/accerl/kernels/edm"
)

// TestImaginationActionEffect covers EvaluateImagination's swapped-action measures: with
// the same actions in every held-out episode, imagining with another episode's actions is
// imagining with the episode's own (the same sampling noise: SwappedMSE equals MSE bit for
// bit and the action effect is 0); with different actions an M_obs of random weights,
// which reads its action input, imagines different frames at every step; an episode too
// short for the horizon is skipped, and one long episode alone has nothing to swap with.
func TestImaginationActionEffect(t *testing.T) {
	const side, horizon = 8, 3
	rng := rand.New(rand.NewPCG(4, 2))
	cfg := edm.Config{ImageSize: side, Cameras: 1, History: 2, ActionDim: 2, Channels: []int{4, 6}, CondDim: 6, GroupSize: 2}
	net := edm.NewNet[float32](cfg, rng, nil)
	e := edm.DefaultEDM()
	episode := func(steps int, actions func(t int) []float64) Episode {
		var ep Episode
		for t := range steps {
			f := make([]uint8, side*side*3)
			for i := range f {
				f[i] = uint8(rng.IntN(256))
			}
			ep.Frames = append(ep.Frames, [][]uint8{f})
			ep.Actions = append(ep.Actions, actions(t))
		}
		return ep
	}
	same := func(t int) []float64 { return []float64{0.5, -0.25 * float64(t)} }
	held := []Episode{episode(6, same), episode(6, same), episode(3, same), episode(6, same)}
	ev, _ := EvaluateImagination(net, e, held, 1, horizon, rand.New(rand.NewPCG(1, 1)))
	if ev.Rollouts != 3 || !slices.Equal(ev.SwappedMSE, ev.MSE) || slices.ContainsFunc(ev.ActionEffectMSE, func(x float64) bool { return x != 0 }) {
		t.Errorf("same actions: %d rollouts, MSE %v, swapped %v, action effect %v; want 3, swapped = MSE, effect 0", ev.Rollouts, ev.MSE, ev.SwappedMSE, ev.ActionEffectMSE)
	}
	// A fresh net zero-initialises layers that would pass its action on (it starts by
	// ignoring the action), so every weight is drawn at random first.
	for i, p := range net.Params() {
		net.Params()[i] = p + float32(0.2*rng.NormFloat64())
	}
	differ := func(t int) []float64 { return []float64{rng.Float64()*2 - 1, rng.Float64()*2 - 1} }
	held = []Episode{episode(6, differ), episode(6, differ), episode(6, differ)}
	ev, _ = EvaluateImagination(net, e, held, 1, horizon, rand.New(rand.NewPCG(1, 1)))
	for h, x := range ev.ActionEffectMSE {
		if !(x > 0) || slices.Equal(ev.SwappedMSE, ev.MSE) {
			t.Errorf("different actions, step %d: action effect %v, swapped %v, MSE %v; want an effect and a different error", h+1, x, ev.SwappedMSE, ev.MSE)
		}
	}
	ev, _ = EvaluateImagination(net, e, held[:1], 1, horizon, rand.New(rand.NewPCG(1, 1)))
	if ev.Rollouts != 1 || ev.SwappedMSE != nil || ev.ActionEffectMSE != nil {
		t.Errorf("one episode: %d rollouts, swapped %v, effect %v; want 1 and none", ev.Rollouts, ev.SwappedMSE, ev.ActionEffectMSE)
	}
}
