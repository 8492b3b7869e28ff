package specs_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/accerl/accerl/specs"
)

// docExample returns the indented code block of doc.go that contains
// needle, without the comment markers.
func docExample(t *testing.T, needle string) string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	for _, line := range strings.Split(string(src), "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			cur = append(cur, code)
			continue
		}
		if line == "//" && len(cur) > 0 { // a blank line inside a code block
			cur = append(cur, "")
			continue
		}
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, b := range blocks {
		if strings.Contains(b, needle) {
			return b
		}
	}
	t.Fatalf("doc.go has no code block containing %q", needle)
	return ""
}

// TestDocReference parses the language reference in doc.go. It claims to
// show every default, so its base arm must equal a minimal spec's.
func TestDocReference(t *testing.T) {
	exp := mustParse(t, docExample(t, `experiment "quickstart"`), nil)
	if got := armNames(exp); !reflect.DeepEqual(got, []string{"base", "sync", "big_net"}) {
		t.Fatalf("arms = %v, want [base sync big_net]", got)
	}
	minimal := mustParse(t, `
experiment "quickstart" {
  budget { env_steps = 100000 }
  env "cartpole" {}
}`, nil)
	if !reflect.DeepEqual(exp.Arms[0], minimal.Arms[0]) {
		t.Errorf("doc reference base differs from the defaults:\n doc %+v\n def %+v", exp.Arms[0], minimal.Arms[0])
	}
	if exp.Seeds[0] != minimal.Seeds[0] || len(exp.Seeds) != len(minimal.Seeds) ||
		exp.MaxParallel != minimal.MaxParallel || exp.Baseline != minimal.Baseline {
		t.Errorf("doc reference header %v/%d/%s differs from the defaults %v/%d/%s",
			exp.Seeds, exp.MaxParallel, exp.Baseline, minimal.Seeds, minimal.MaxParallel, minimal.Baseline)
	}
	big, _ := exp.Arm("big_net")
	if big.Config.Algorithm.LearningRate != 3e-4 || !reflect.DeepEqual(big.Config.Policy.Hidden, []int{128, 128}) {
		t.Errorf("big_net = %+v", big.Config)
	}

	// The nested-block example must parse inside an experiment too.
	nested := docExample(t, `ablation "short_wait"`)
	exp = mustParse(t, "experiment \"n\" {\n budget { env_steps = 1 }\n env \"cartpole\" {}\n"+nested+"\n}", nil)
	if got := exp.Arms[1].Config.Pipeline.Inference.MaxWait.String(); got != "1ms" {
		t.Errorf("short_wait max_wait = %s, want 1ms", got)
	}
}

// TestDefaultConfigIsFresh checks that DefaultConfig shares no state between
// calls, so a caller modifying one cannot change the defaults.
func TestDefaultConfigIsFresh(t *testing.T) {
	a := specs.DefaultConfig()
	a.Policy.Hidden[0] = 1
	if b := specs.DefaultConfig(); b.Policy.Hidden[0] != 64 {
		t.Errorf("DefaultConfig hidden = %v after modifying an earlier copy", b.Policy.Hidden)
	}
	s := specs.DefaultSeeds()
	s[0] = 99
	if specs.DefaultSeeds()[0] != 1 {
		t.Error("DefaultSeeds shares its slice")
	}
}
