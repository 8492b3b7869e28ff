package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/accerl/accerl/jsondur"
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
// value does. Adding a field to the spec types changes every hash (unless
// it is omitted while empty).
//
// Durations enter the hash as integer nanoseconds, as they were encoded
// before JSON wrote them as strings with units, so that hashes, and with
// them the experiments that state directories and workflows know by hash,
// survive the change (TestHashGolden).
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
	sum := sha256.Sum256(nanosecondDurations(b))
	return hex.EncodeToString(sum[:])
}

// durationKeys are the JSON names of the jsondur.Duration fields reachable
// from Arm. The spec types reuse no such name for a field of another type
// (TestDurationKeysAreOnlyDurations), so a key names a duration wherever it
// appears.
var durationKeys = jsonNamesOfType(reflect.TypeFor[Arm](), reflect.TypeFor[jsondur.Duration]())

// durationField matches `"key":"value"` for a duration key, right after the
// `{` or `,` that opens an object member. Inside a JSON string every quote is
// escaped, so the pattern cannot match text within a string value.
var durationField = regexp.MustCompile(`([{,])"(` + strings.Join(durationKeys, "|") + `)":"([^"\\]*)"`)

// nanosecondDurations rewrites the duration members of json.Marshal's output
// from strings ("30m0s") to integer nanoseconds (1800000000000), the bytes
// the hash has always covered.
func nanosecondDurations(b []byte) []byte {
	return durationField.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := durationField.FindSubmatch(m)
		d, err := time.ParseDuration(string(sub[3]))
		if err != nil {
			// jsondur.Duration writes only what ParseDuration reads.
			panic(fmt.Sprintf("specs: duration %q in the hashed encoding: %v", sub[3], err))
		}
		out := append([]byte(nil), sub[1]...)
		out = append(out, '"')
		out = append(out, sub[2]...)
		out = append(out, `":`...)
		return strconv.AppendInt(out, int64(d), 10)
	})
}

// jsonNamesOfType returns, sorted, the JSON names of the fields of type want
// in t and in the structs, slices and pointers it holds.
func jsonNamesOfType(t, want reflect.Type) []string {
	names := map[string]bool{}
	visitFields(t, func(f reflect.StructField) {
		if f.Type == want {
			names[jsonName(f)] = true
		}
	})
	return slices.Sorted(maps.Keys(names))
}

// visitFields calls visit for every field of t and, recursively, of the
// structs its fields hold directly or through pointers, slices and arrays;
// each struct type once.
func visitFields(t reflect.Type, visit func(reflect.StructField)) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for f := range t.Fields() {
			visit(f)
			walk(f.Type)
		}
	}
	walk(t)
}

// jsonName is the name encoding/json gives field f.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
