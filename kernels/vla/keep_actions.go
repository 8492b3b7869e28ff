package vla

import "fmt"

// KeepActions returns the parameters of the model c with only its first n action tokens:
// the same network (stem, embeddings, blocks, heads) with the position embeddings of
// action positions n … ActionDims−1 dropped, in the layout of c with ActionDims = n (the
// second result). params is in c's layout ([Net.Params], or a copy in float64).
//
// The attention mask is causal over the action positions and the prefix never attends to
// them (the value pools the prefix alone), so the smaller model's log-probabilities,
// entropies, greedy tokens and values over its n positions are the larger model's over its
// first n, whatever the later tokens would have been (up to the float rounding of the
// smaller products). A policy trained by behaviour cloning on whole action chunks can so
// act with, and be fine-tuned on, the chunk's executed actions alone.
func KeepActions[F Float](c Config, params []F, n int) ([]F, Config, error) {
	if n < 1 || n > c.ActionDims {
		return nil, c, fmt.Errorf("vla: keep %d action tokens of %d: want 1 ≤ n ≤ %d", n, c.ActionDims, c.ActionDims)
	}
	if len(params) != c.ParamCount() {
		return nil, c, fmt.Errorf("vla: keep actions: %d parameters, the model has %d", len(params), c.ParamCount())
	}
	_, spans, _, _ := buildLayout[F](c, nil, nil)
	var pos Span
	for _, s := range spans {
		if s.Name == "seq_pos" {
			pos = s
		}
	}
	// seq_pos rows: MaxInstr instruction positions, the proprio position, then the action
	// positions; the rows past the first n action positions go.
	cut := pos.Offset + (c.MaxInstr+1+n)*c.Dim
	end := pos.Offset + (c.MaxInstr+1+c.ActionDims)*c.Dim
	out := make([]F, 0, len(params)-(end-cut))
	out = append(append(out, params[:cut]...), params[end:]...)
	k := c
	k.ActionDims = n
	return out, k, nil
}
