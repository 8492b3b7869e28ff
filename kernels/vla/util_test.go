package vla

import "math/rand/v2"

func randVec[F Float](rng *rand.Rand, n int, scale float64) []F {
	x := make([]F, n)
	for i := range x {
		x[i] = F(scale * rng.NormFloat64())
	}
	return x
}
