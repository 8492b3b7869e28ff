package engine

import (
	"math"
	"time"
)

// durationHist is a fixed-size histogram of durations with geometric buckets,
// 16 per doubling, starting at 1µs: bucket i (i >= 1) holds durations d with
// 2^((i-1)/16) µs <= d < 2^(i/16) µs, bucket 0 everything below 1µs. Quantiles
// are reported as the geometric midpoint of their bucket, so they carry a
// relative error of at most 2^(1/32)-1 ≈ 2.2%. The range ends at 2^27 µs
// (≈ 134 s); longer durations land in the last bucket.
type durationHist struct {
	counts [durHistBuckets]int64
	n      int64
	sum    time.Duration
}

const (
	durHistPerDoubling = 16
	durHistBuckets     = 27*durHistPerDoubling + 1
)

func durBucket(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us < 1 {
		return 0
	}
	i := 1 + int(math.Floor(durHistPerDoubling*math.Log2(us)))
	if i >= durHistBuckets {
		i = durHistBuckets - 1
	}
	return i
}

// add records one duration.
func (h *durationHist) add(d time.Duration) {
	h.counts[durBucket(d)]++
	h.n++
	h.sum += d
}

// merge adds all counts of o into h.
func (h *durationHist) merge(o *durationHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
}

// quantile returns the q-quantile (0 <= q <= 1) in milliseconds, 0 when the
// histogram is empty.
func (h *durationHist) quantileMs(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var cum int64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			if i == 0 {
				return 0.5e-3 // below 1µs: report half a microsecond
			}
			lowUs := math.Exp2(float64(i-1) / durHistPerDoubling)
			return lowUs * math.Exp2(0.5/durHistPerDoubling) / 1e3
		}
	}
	return 0 // unreachable: cum reaches n
}

// meanMs returns the exact mean in milliseconds, 0 when empty.
func (h *durationHist) meanMs() float64 {
	if h.n == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.n) / float64(time.Millisecond)
}
