package specs

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary sources through every phase of Parse. Whatever the input,
// Parse must return (no panic, no stack overflow, no hang) with either an experiment or
// an error diagnostic, and a returned experiment must have arms and seeds.
//
//	go test ./specs -run '^$' -fuzz FuzzParse -fuzztime 5m
func FuzzParse(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{"../examples/*.hcl", "testdata/*.hcl", "testdata/invalid/*.hcl"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, m...)
	}
	if len(seeds) == 0 {
		f.Fatal("no seed specs found")
	}
	for _, path := range seeds {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		exp, diags := Parse("fuzz.hcl", src, nil)
		switch {
		case exp == nil && !diags.HasErrors():
			t.Fatalf("no experiment and no error: %v", diags)
		case exp != nil && diags.HasErrors():
			t.Fatalf("an experiment and errors: %v", diags)
		case exp != nil && (len(exp.Arms) == 0 || len(exp.Seeds) == 0):
			t.Fatalf("experiment with %d arms and %d seeds", len(exp.Arms), len(exp.Seeds))
		}
	})
}
