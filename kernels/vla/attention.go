package vla

import (
	"math"
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

// attnForward is multi-head scaled dot-product attention (Vaswani et al.
// 2017, eq. 1) over nb sequences of t positions. qkv holds each position's
// query | key | value (nb·t × 3d; head h at columns h·dh … (h+1)·dh−1 of
// each part), valid marks non-padding positions (nb·t). For each sequence
// and head,
//
//	P = softmax_masked(Q·Kᵀ/√dh),  ctx_h = P·V
//
// with masked entries exactly 0. P is kept in probs (nb·heads·t·t) when
// probs is not nil, for attnBackward. Sequences × heads run in parallel.
func attnForward[F Float](qkv []F, nb, t, d, heads, tp int, valid []bool, probs, ctx []F) {
	dh := d / heads
	scale := F(1 / math.Sqrt(float64(dh)))
	parallelFor(nb*heads, func(job int) {
		b, h := job/heads, job%heads
		var p []F
		if probs != nil {
			p = probs[job*t*t : (job+1)*t*t]
		} else {
			p = make([]F, t*t)
		}
		base := b * t * 3 * d
		q := qkv[base+h*dh:]
		k := qkv[base+d+h*dh:]
		v := qkv[base+2*d+h*dh:]
		gemmSerial(false, true, t, t, dh, scale, q, 3*d, k, 3*d, 0, p, t)
		vb := valid[b*t : (b+1)*t]
		for i := 0; i < t; i++ {
			maskedSoftmax(p[i*t:(i+1)*t], func(j int) bool { return allowed(vb, tp, i, j) })
		}
		gemmSerial(false, false, t, dh, t, 1, p, t, v, 3*d, 0, ctx[b*t*d+h*dh:], d)
	})
}

// maskedSoftmax replaces the scores in row by their softmax over the
// entries where ok(j), and sets the others to 0. At least one entry must be
// allowed (every query sees the image patches).
func maskedSoftmax[F Float](row []F, ok func(j int) bool) {
	mx := F(math.Inf(-1))
	for j, s := range row {
		if ok(j) {
			mx = max(mx, s)
		}
	}
	sum := 0.0
	for j, s := range row {
		if ok(j) {
			e := math.Exp(float64(s - mx))
			row[j] = F(e)
			sum += e
		} else {
			row[j] = 0
		}
	}
	inv := F(1 / sum)
	for j := range row {
		row[j] *= inv
	}
}

// attnBackward writes ∂L/∂qkv (overwriting dqkv) given ∂L/∂ctx, for the
// probabilities attnForward kept. Per sequence and head, with S the scaled
// scores:
//
//	dP = dctx_h·Vᵀ,  dS = P ⊙ (dP − rowsum(P ⊙ dP)),
//	dQ = dS·K/√dh,  dK = dSᵀ·Q/√dh,  dV = Pᵀ·dctx_h
//
// (masked entries have P = 0, so they pass no gradient).
func attnBackward[F Float](qkv, probs, dctx []F, nb, t, d, heads int, dqkv []F) {
	dh := d / heads
	scale := F(1 / math.Sqrt(float64(dh)))
	parallelFor(nb*heads, func(job int) {
		b, h := job/heads, job%heads
		p := probs[job*t*t : (job+1)*t*t]
		dp := make([]F, t*t)
		base := b * t * 3 * d
		q, k, v := qkv[base+h*dh:], qkv[base+d+h*dh:], qkv[base+2*d+h*dh:]
		do := dctx[b*t*d+h*dh:]
		gemmSerial(false, true, t, t, dh, 1, do, d, v, 3*d, 0, dp, t)
		for i := 0; i < t; i++ {
			pr, dr := p[i*t:(i+1)*t], dp[i*t:(i+1)*t]
			var s F
			for j, pv := range pr {
				s += pv * dr[j]
			}
			for j, pv := range pr {
				dr[j] = pv * (dr[j] - s)
			}
		}
		gemmSerial(false, false, t, dh, t, scale, dp, t, k, 3*d, 0, dqkv[base+h*dh:], 3*d)
		gemmSerial(true, false, t, dh, t, scale, dp, t, q, 3*d, 0, dqkv[base+d+h*dh:], 3*d)
		gemmSerial(true, false, t, dh, t, 1, p, t, do, d, 0, dqkv[base+2*d+h*dh:], 3*d)
	})
}

// attnDecode attends one new query per sequence, at position pos, to the
// cached keys and values of positions 0 … pos (kc, vc: nb × tmax × d,
// position pos already written), with the same mask as attnForward:
// ctx (nb × d) = softmax_masked(q·Kᵀ/√dh)·V per head.
func attnDecode[F Float](q, kc, vc []F, nb, tmax, d, heads, pos, tp int, valid []bool, ctx []F) {
	dh := d / heads
	scale := F(1 / math.Sqrt(float64(dh)))
	n := pos + 1
	parallelFor(nb, func(b int) {
		s := make([]F, n)
		vb := valid[b*tmax : (b+1)*tmax]
		for h := 0; h < heads; h++ {
			qh := q[b*d+h*dh : b*d+(h+1)*dh]
			for j := 0; j < n; j++ {
				kh := kc[(b*tmax+j)*d+h*dh : (b*tmax+j)*d+(h+1)*dh]
				var dot F
				for c, x := range qh {
					dot += x * kh[c]
				}
				s[j] = dot * scale
			}
			maskedSoftmax(s, func(j int) bool { return allowed(vb, tp, pos, j) })
			out := ctx[b*d+h*dh : b*d+(h+1)*dh]
			clear(out)
			for j, pj := range s {
				if pj == 0 {
					continue
				}
				vh := vc[(b*tmax+j)*d+h*dh : (b*tmax+j)*d+(h+1)*dh]
				for c, x := range vh {
					out[c] += pj * x
				}
			}
		}
	})
}
