package specs

import (
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// budgetSpec is a minimal spec whose budget.env_steps is expr.
func budgetSpec(expr string) []byte {
	return []byte("experiment \"x\" {\n  seeds = [1]\n  budget { env_steps = " + expr + " }\n  env \"cartpole\" {}\n}\n")
}

// hiddenSpec is a minimal spec whose policy.hidden is expr.
func hiddenSpec(expr string) []byte {
	return []byte("experiment \"x\" {\n  seeds = [1]\n  budget { env_steps = 1000 }\n  env \"cartpole\" {}\n  policy {\n    hidden = " + expr + "\n  }\n}\n")
}

// TestParseLimits feeds sources that used to overflow HCL's recursive parser (a fatal
// error that kills the process), or took minutes, and wants one clear diagnostic each.
func TestParseLimits(t *testing.T) {
	ones := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1, ", n), ", ") + "]" }
	cases := []struct {
		name, summary string
		src           []byte
	}{
		{"nested brackets", "Nesting too deep", hiddenSpec(strings.Repeat("[", 100000))},
		{"nested parens", "Nesting too deep", budgetSpec(strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000))},
		{"nested templates", "Nesting too deep", budgetSpec("\"" + strings.Repeat("${\"", 100000))},
		{"unary minus", "Expression too long", budgetSpec(strings.Repeat("-", 1000000) + "1")},
		{"unary not", "Expression too long", budgetSpec(strings.Repeat("!", 1000000) + "true")},
		{"binary chain", "Expression too long", budgetSpec("1" + strings.Repeat("+1", 1000000))},
		{"multi-line chain", "Expression too long", budgetSpec("(1" + strings.Repeat("\n+1", 100000) + ")")},
		{"conditional chain", "Expression too long", budgetSpec(strings.Repeat("true ? 1 : ", 100000) + "1")},
		{"template directives", "Too many template interpolations", budgetSpec("\"" + strings.Repeat("%{if true}", 100000) + "\"")},
		{"interpolations", "Too many template interpolations", budgetSpec("\"" + strings.Repeat("${1}", 2000) + "\"")},
		{"for expression", "For expressions not supported", hiddenSpec("[for x in [1, 2]: [for y in [3]: x * y]]")},
		{"too large", "Spec too large", hiddenSpec(ones(MaxSpecBytes / 3))},
		{"long list", "List too long", hiddenSpec(ones(50000))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, diags := Parse("x.hcl", c.src, nil)
			// Generous for 2 shared cores; the quadratic decode took 21 s for 50k elements.
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("took %v", el)
			}
			if len(diags) == 0 || diags[0].Summary != c.summary {
				t.Fatalf("diags = %v, want %q", diags, c.summary)
			}
		})
	}
}

// TestParseLimitsAllowed: what real specs write stays well inside the limits.
func TestParseLimitsAllowed(t *testing.T) {
	for _, e := range []string{
		"[64, 64]",
		"[" + strings.TrimSuffix(strings.Repeat("8, ", maxListLen), ", ") + "]",
		"[[[[[[[[1]]]]]]]][0][0][0][0][0][0][0]",
		"[1 + 2 + 3 + 4 - 5 * 6 / 7]",
	} {
		_, diags := Parse("x.hcl", hiddenSpec(e), nil)
		for _, d := range diags {
			if d.Summary == "Nesting too deep" || d.Summary == "Expression too long" || d.Summary == "List too long" {
				t.Errorf("hidden = %.40s: %v", e, d)
			}
		}
	}
}

// TestVarLimits applies the limits to -var text too.
func TestVarLimits(t *testing.T) {
	src := []byte("variable \"h\" {\n  default = [64]\n}\nexperiment \"x\" {\n  seeds = [1]\n  budget { env_steps = 1000 }\n  env \"cartpole\" {}\n  policy { hidden = var.h }\n}\n")
	for raw, summary := range map[string]string{
		strings.Repeat("[", 100000):                           "Nesting too deep",
		strings.Repeat("-", 100000) + "1":                     "Expression too long",
		"[for x in [1]: x]":                                   "For expressions not supported",
		"\"" + strings.Repeat("a", maxVariableBytes+1) + "\"": "Variable value too large",
	} {
		_, diags := Parse("x.hcl", src, map[string]string{"h": raw})
		if len(diags) != 1 || diags[0].Summary != summary {
			t.Errorf("-var h=%.20s...: diags = %v, want one %q", raw, diags, summary)
		}
	}
}

// TestConvertValueLinear: converting a long tuple to a list is linear; cty's own
// conversion took 21 s for 50,000 numbers.
func TestConvertValueLinear(t *testing.T) {
	elems := make([]cty.Value, 100000)
	for i := range elems {
		elems[i] = cty.NumberIntVal(int64(i))
	}
	start := time.Now()
	v, err := convertValue(cty.TupleVal(elems), cty.List(cty.Number))
	if err != nil || v.LengthInt() != len(elems) {
		t.Fatalf("convertValue: %v, length %d", err, v.LengthInt())
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("converting %d elements took %v", len(elems), el)
	}
	if _, err := convertValue(cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.NullVal(cty.Number)}), cty.List(cty.Number)); err == nil {
		t.Error("a null element was accepted")
	}
}
