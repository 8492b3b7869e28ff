package kernels

import (
	"fmt"
	"math"
)

// EpisodePiece describes one [Piece] of a batch for [GroupAdvantages]: the samples
// [Start, Start+Len), whether they end their episode (terminated or truncated at the last
// step), whether they continue the episode of the piece before them (the same environment's
// next piece, that one not ending its episode), and the group of their episode (the task:
// episodes of one group are compared with each other).
type EpisodePiece struct {
	Start, Len int
	Ends       bool
	Continues  bool
	Group      string
	// Centred, on the first piece of a group's first ended episode, gives that group
	// mean-centred advantages, A_i = R_i − mean(R), without the division by the std
	// (Liu et al. 2025, "Understanding R1-Zero-Like Training", Dr. GRPO): for graded
	// outcomes, whose small differences the std would scale up to ±1.
	Centred bool
}

// GroupAdvantages is GRPO's outcome advantage (Shao et al. 2024, "DeepSeekMath", §4.1.2,
// outcome supervision; verl's adv_estimator = grpo) over the episodes of one batch: each
// episode that ends in the batch scores R, the sum of its rewards in the batch (for a
// sparse reward at the episode's end, its whole return); within each group of G ≥ 2 such
// episodes, every sample of episode i gets
//
//	A_i = (R_i − mean(R)) / (std(R) + 1e-6)        (std with G − 1, as torch.std)
//
// (A_i = R_i − mean(R) in a group marked Centred), so that episodes are judged against
// others of the same task, with no critic. Samples of
// an episode that does not end in the batch (its outcome is not known yet), and of a
// group's only episode (nothing to compare it with), get 0; so does every episode of a
// group whose outcomes are all equal. adv (len = the pieces' total) is overwritten.
// It returns the number of ended episodes and of groups with at least two.
func GroupAdvantages(rewards []float64, pieces []EpisodePiece, adv []float64) (episodes, groups int) {
	if len(adv) != len(rewards) {
		panic(fmt.Sprintf("kernels: GroupAdvantages: %d rewards but %d advantages", len(rewards), len(adv)))
	}
	clear(adv)
	type episode struct {
		pieces []int // indices into pieces
		ret    float64
	}
	var ended []episode
	byGroup := map[string][]int{} // group → indices into ended
	var order []string            // groups in order of first appearance (deterministic sums)
	var cur *episode
	var curGroup string
	for j, p := range pieces {
		if p.Start < 0 || p.Len < 1 || p.Start+p.Len > len(rewards) {
			panic(fmt.Sprintf("kernels: GroupAdvantages: piece %d covers [%d, %d) of %d samples", j, p.Start, p.Start+p.Len, len(rewards)))
		}
		if !p.Continues || cur == nil {
			cur, curGroup = &episode{}, p.Group
		}
		cur.pieces = append(cur.pieces, j)
		for _, r := range rewards[p.Start : p.Start+p.Len] {
			cur.ret += r
		}
		if p.Ends {
			if _, ok := byGroup[curGroup]; !ok {
				order = append(order, curGroup)
			}
			byGroup[curGroup] = append(byGroup[curGroup], len(ended))
			ended = append(ended, *cur)
			cur = nil
		}
	}
	for _, g := range order {
		members := byGroup[g]
		if len(members) < 2 {
			continue
		}
		groups++
		mean := 0.0
		for _, i := range members {
			mean += ended[i].ret
		}
		mean /= float64(len(members))
		ss := 0.0
		for _, i := range members {
			d := ended[i].ret - mean
			ss += d * d
		}
		std := math.Sqrt(ss / float64(len(members)-1))
		centred := pieces[ended[members[0]].pieces[0]].Centred
		for _, i := range members {
			a := (ended[i].ret - mean) / (std + 1e-6)
			if centred {
				a = ended[i].ret - mean
			}
			for _, j := range ended[i].pieces {
				p := pieces[j]
				for t := p.Start; t < p.Start+p.Len; t++ {
					adv[t] = a
				}
			}
		}
	}
	return len(ended), groups
}
