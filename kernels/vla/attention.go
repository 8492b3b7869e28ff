package vla

import (
	"math"

	"github.com/accerl/accerl/kernels"
)

// allowed is the attention mask: query position i of a sequence whose
// observation prefix has length tp may attend to key position j when the
// key is not padding and either lies in the prefix or is an action
// position no later than i:
//
//	allowed(i, j) = valid_j ∧ (j < tp ∨ j ≤ i)
//
// so the prefix is bidirectional (prefix queries never see action keys,
// which is what makes the prefix's keys and values cacheable) and the
// action positions are causal.
func allowed(valid []bool, tp, i, j int) bool { return valid[j] && (j < tp || j <= i) }

// keyLimit is the number of leading key positions query i may look at: the
// prefix, plus the action positions up to i. Within them allowed(i, j) is
// valid_j; past them it is false.
func keyLimit(tp, i int) int { return max(tp, i+1) }

// Attention works on head-major copies of the queries, keys and values:
// problem p = b·heads + h (sequence b, head h) holds its t positions × dh
// columns contiguously, so that every product of all sequences and heads is
// one batched dense GEMM ([kernels.Backend.GemmStrided]). Keys and values
// may be laid out with ts ≥ t rows per problem (the KV cache of Act, whose
// rows past the prefix are filled by the decode steps).

// splitHeads copies the q | k | v rows of qkv (nb·t × 3d, head h at
// columns h·dh … (h+1)·dh−1 of each part) into head-major q (nb·heads × t ×
// dh) and k, v (nb·heads × ts × dh, rows t … ts−1 untouched).
func splitHeads[F Float](qkv []F, nb, t, d, heads, ts int, q, k, v []F) {
	dh := d / heads
	parallelRange(nb*t, rowGrain(3*d), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, i := r/t, r%t
			src := qkv[r*3*d : (r+1)*3*d]
			for h := 0; h < heads; h++ {
				p := b*heads + h
				copy(q[(p*t+i)*dh:(p*t+i+1)*dh], src[h*dh:(h+1)*dh])
				copy(k[(p*ts+i)*dh:(p*ts+i+1)*dh], src[d+h*dh:d+(h+1)*dh])
				copy(v[(p*ts+i)*dh:(p*ts+i+1)*dh], src[2*d+h*dh:2*d+(h+1)*dh])
			}
		}
	})
}

// splitOne copies x (nb·t × d) into head-major out (nb·heads × t × dh).
func splitOne[F Float](x []F, nb, t, d, heads int, out []F) {
	dh := d / heads
	parallelRange(nb*t, rowGrain(d), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, i := r/t, r%t
			src := x[r*d : (r+1)*d]
			for h := 0; h < heads; h++ {
				p := b*heads + h
				copy(out[(p*t+i)*dh:(p*t+i+1)*dh], src[h*dh:(h+1)*dh])
			}
		}
	})
}

// mergeHeads is the inverse layout change for one part: x (nb·heads × ts ×
// dh, the first t rows of each problem) goes to columns off + h·dh … of
// the rows of out (nb·t × ld).
func mergeHeads[F Float](x []F, nb, t, d, heads, ts int, out []F, ld, off int) {
	dh := d / heads
	parallelRange(nb*t, rowGrain(d), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, i := r/t, r%t
			dst := out[r*ld+off : r*ld+off+d]
			for h := 0; h < heads; h++ {
				p := b*heads + h
				copy(dst[h*dh:(h+1)*dh], x[(p*ts+i)*dh:(p*ts+i+1)*dh])
			}
		}
	})
}

// attnForward is multi-head scaled dot-product attention (Vaswani et al.
// 2017, eq. 1) over nb sequences of t positions, on head-major q (nb·heads
// × t × dh) and k, v (nb·heads × ts × dh; see splitHeads). valid marks the
// non-padding positions (nb × vs, vs ≥ t). For each problem p,
//
//	P = softmax_masked(Q·Kᵀ/√dh),  ctx = P·V
//
// with masked entries exactly 0; P goes to probs (nb·heads × t × t, kept
// for attnBackward) and ctx (head-major, nb·heads × t × dh) to ctx.
func attnForward[F Float](be kernels.Backend, q, k, v []F, ts, nb, t, heads, dh, tp int, valid []bool, vs int, probs, ctx []F) {
	np := nb * heads
	scale := F(1 / math.Sqrt(float64(dh)))
	batchMatmul(be, false, true, t, t, dh, scale, q, t*dh, k, ts*dh, 0, probs, t*t, np)
	parallelRange(np, max(1, parGrain/(t*t)), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			vb := valid[(p/heads)*vs:]
			for i := 0; i < t; i++ {
				maskedSoftmax(probs[(p*t+i)*t:(p*t+i+1)*t], vb, keyLimit(tp, i))
			}
		}
	})
	batchMatmul(be, false, false, t, dh, t, 1, probs, t*t, v, ts*dh, 0, ctx, t*dh, np)
}

// maskedSoftmax replaces the scores in row by their softmax over the
// entries j < lim with valid[j], and sets the others to 0. At least one
// entry must be allowed (every query sees the image patches).
func maskedSoftmax[F Float](row []F, valid []bool, lim int) {
	lim = min(lim, len(row))
	mx := F(math.Inf(-1))
	for j, s := range row[:lim] {
		if valid[j] {
			mx = max(mx, s)
		}
	}
	sum := 0.0
	if isF32[F]() {
		sum = maskedExp32(as32(row[:lim]), valid, float32(mx))
	} else {
		for j, s := range row[:lim] {
			if valid[j] {
				e := expNeg(s - mx)
				row[j] = e
				sum += float64(e)
			} else {
				row[j] = 0
			}
		}
	}
	clear(row[lim:])
	inv := F(1 / sum)
	for j := range row[:lim] {
		row[j] *= inv
	}
}

// attnBackward writes ∂L/∂q, ∂L/∂k, ∂L/∂v (head-major like the inputs,
// overwritten; dk and dv with t rows per problem) given ∂L/∂ctx (dctx,
// head-major), for the probabilities attnForward kept. Per problem, with S
// the scaled scores:
//
//	dP = dctx·Vᵀ,  dS = P ⊙ (dP − rowsum(P ⊙ dP)),
//	dQ = dS·K/√dh,  dK = dSᵀ·Q/√dh,  dV = Pᵀ·dctx
//
// (masked entries have P = 0, so they pass no gradient). dp is scratch of
// probs' size.
func attnBackward[F Float](be kernels.Backend, q, k, v []F, ts int, probs, dctx []F, nb, t, heads, dh int, dq, dk, dv, dp []F) {
	np := nb * heads
	scale := F(1 / math.Sqrt(float64(dh)))
	batchMatmul(be, false, true, t, t, dh, 1, dctx, t*dh, v, ts*dh, 0, dp, t*t, np)
	parallelRange(np*t, rowGrain(t), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			pr, dr := probs[r*t:(r+1)*t], dp[r*t:(r+1)*t]
			var s F
			for j, pv := range pr {
				s += pv * dr[j]
			}
			for j, pv := range pr {
				dr[j] = pv * (dr[j] - s)
			}
		}
	})
	batchMatmul(be, false, false, t, dh, t, scale, dp, t*t, k, ts*dh, 0, dq, t*dh, np)
	batchMatmul(be, true, false, t, dh, t, scale, dp, t*t, q, t*dh, 0, dk, t*dh, np)
	batchMatmul(be, true, false, t, dh, t, 1, probs, t*t, dctx, t*dh, 0, dv, t*dh, np)
}

// attnDecode attends one new query per sequence, at position pos, to the
// cached keys and values of positions 0 … pos (kc, vc head-major: nb·heads
// × tmax × dh, position pos already written), with the same mask as
// attnForward: ctx (nb × d, head h at columns h·dh …) = softmax_masked(q·Kᵀ/
// √dh)·V per head, q nb × d likewise. s is scratch of nb·heads·tmax.
func attnDecode[F Float](q, kc, vc []F, nb, tmax, d, heads, pos, tp int, valid []bool, ctx, s []F) {
	dh := d / heads
	scale := F(1 / math.Sqrt(float64(dh)))
	n := pos + 1
	parallelRange(nb*heads, max(1, parGrain/(2*n*dh)), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			b, h := p/heads, p%heads
			sp := s[p*tmax : p*tmax+n]
			qh := q[b*d+h*dh : b*d+(h+1)*dh]
			keys := kc[p*tmax*dh:]
			for j := range sp {
				kh := keys[j*dh : (j+1)*dh]
				var dot F
				for c, x := range qh {
					dot += x * kh[c]
				}
				sp[j] = dot * scale
			}
			maskedSoftmax(sp, valid[b*tmax:], keyLimit(tp, pos))
			out := ctx[b*d+h*dh : b*d+(h+1)*dh]
			clear(out)
			vals := vc[p*tmax*dh:]
			for j, pj := range sp {
				if pj == 0 {
					continue
				}
				vh := vals[j*dh : (j+1)*dh]
				for c, x := range vh {
					out[c] += pj * x
				}
			}
		}
	})
}
