package worldmodel

import (
	"fmt"

	"github.com/accerl/accerl/kernels"
)

// successLabels returns, per row, 1 if the row's episode succeeded and 0
// otherwise. Episodes are contiguous, and their last row carries the flags.
func successLabels(d *Dataset) ([]float64, error) {
	if !d.Info.HasSuccess {
		return nil, fmt.Errorf("reward mode %q needs an environment with a success signal, and %q has none; use reward mode %q",
			RewardSuccessDelta, d.Info.Config.Env, RewardDirect)
	}
	labels := make([]float64, d.Len())
	for end := d.Len() - 1; end >= 0; {
		ok := d.Success[end]
		start := end
		for start > 0 && d.Episode[start-1] == d.Episode[end] {
			start--
		}
		if ok {
			for i := start; i <= end; i++ {
				labels[i] = 1
			}
		}
		end = start - 1
	}
	return labels, nil
}

// links returns, per row, the row of the previous step of the same
// episode, or −1 at the episode's first row. It is computed once.
func (d *Dataset) links() []int {
	if d.prev != nil {
		return d.prev
	}
	d.prev = make([]int, d.Len())
	for i := range d.prev {
		d.prev[i] = -1
		if i > 0 && d.Episode[i-1] == d.Episode[i] && d.T[i-1] == d.T[i]-1 {
			d.prev[i] = i - 1
		}
	}
	return d.prev
}

// History fills dst (k×ObsDim) with the history window o_{t−k+1} … o_t of
// row i, oldest first, zeros before the episode's start.
func (d *Dataset) History(i, k int, dst []float64) {
	od := d.Info.ObsDim
	if len(dst) != k*od {
		panic(fmt.Sprintf("worldmodel: Dataset.History: dst has %d values, want %d", len(dst), k*od))
	}
	prev := d.links()
	r := i
	for s := k - 1; s >= 0; s-- {
		slot := dst[s*od : (s+1)*od]
		if r < 0 {
			clear(slot)
			continue
		}
		copy(slot, d.Obs[r*od:(r+1)*od])
		r = prev[r]
	}
}

// FillHistory fills dst (k×d) with the last k of the observations in past
// (n×d, oldest first, the newest last), zero-padding at the front when
// n < k. An engine uses it to build a start state from an episode's
// observations so far.
func FillHistory(dst, past []float64, d, k int) {
	if d <= 0 || len(dst) != k*d || len(past)%d != 0 {
		panic(fmt.Sprintf("worldmodel: FillHistory: dst has %d values and past %d, want k*d = %d and a multiple of d = %d",
			len(dst), len(past), k*d, d))
	}
	n := len(past) / d
	pad := max(0, k-n)
	clear(dst[:pad*d])
	copy(dst[pad*d:], past[max(0, n-k)*d:])
}

// batcher assembles kernels batches from rows of a dataset into reused
// buffers.
type batcher struct {
	ds      *Dataset
	k       int
	success []float64 // per-row labels in success mode, nil in direct mode
	obs     kernels.ObsBatch
	rew     kernels.RewardBatch
}

// obsBatch gathers the rows idx into an ObsBatch.
func (b *batcher) obsBatch(idx []int) kernels.ObsBatch {
	d, aw, k := b.ds.Info.ObsDim, b.ds.Info.ActionDims, b.k
	n := len(idx)
	ob := &b.obs
	ob.N = n
	ob.Hist = grow(ob.Hist, n*k*d)
	ob.Action = grow(ob.Action, n*aw)
	ob.Next = grow(ob.Next, n*d)
	for i, r := range idx {
		b.ds.History(r, k, ob.Hist[i*k*d:(i+1)*k*d])
		copy(ob.Action[i*aw:(i+1)*aw], b.ds.Action[r*aw:(r+1)*aw])
		copy(ob.Next[i*d:(i+1)*d], b.ds.NextObs[r*d:(r+1)*d])
	}
	return *ob
}

// rewBatch gathers the rows idx into a RewardBatch: the observation is
// o_{t+1}, the target r_t (direct) or the episode's success label.
func (b *batcher) rewBatch(idx []int) kernels.RewardBatch {
	d := b.ds.Info.ObsDim
	n := len(idx)
	rb := &b.rew
	rb.N = n
	rb.Obs = grow(rb.Obs, n*d)
	rb.Target = grow(rb.Target, n)
	rb.Terminated = grow(rb.Terminated, n)
	for i, r := range idx {
		copy(rb.Obs[i*d:(i+1)*d], b.ds.NextObs[r*d:(r+1)*d])
		if b.success != nil {
			rb.Target[i] = b.success[r]
		} else {
			rb.Target[i] = b.ds.Reward[r]
		}
		rb.Terminated[i] = 0
		if b.ds.Terminated[r] {
			rb.Terminated[i] = 1
		}
	}
	return *rb
}

func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}
