package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// hashed is the part of an Experiment its hash covers: everything but the
// hash itself. encoding/json writes struct fields in declaration order and
// these types hold no maps, so the encoding is canonical.
type hashed struct {
	Name        string   `json:"name"`
	Seeds       []uint64 `json:"seeds"`
	MaxParallel int      `json:"max_parallel"`
	Baseline    string   `json:"baseline"`
	Arms        []Arm    `json:"arms"`
}

// ComputeHash returns the hex SHA-256 of the canonical JSON encoding of the
// resolved experiment (Name, Seeds, MaxParallel, Baseline, Arms). Only
// resolved values enter it: comments, layout, attribute order and whether a
// value came from a variable or a literal do not change it; any resolved
// value does. Adding a field to the spec types changes every hash.
func (e *Experiment) ComputeHash() string {
	b, err := json.Marshal(hashed{
		Name:        e.Name,
		Seeds:       e.Seeds,
		MaxParallel: e.MaxParallel,
		Baseline:    e.Baseline,
		Arms:        e.Arms,
	})
	if err != nil {
		// Only non-finite floats make these types fail to encode, and
		// decoding rejects them; reaching here is a programmer bug.
		panic(fmt.Sprintf("specs: encode experiment for hashing: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
