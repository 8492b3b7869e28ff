package specs

// The typed attribute setters of the decoder (whole numbers, floats, booleans, enums, strings,
// durations, lists of whole numbers) and the numeric bounds they check.

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/accerl/accerl/jsondur"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// bound is an allowed numeric interval, closed or open at either end.
type bound struct {
	lo, hi         float64
	hasLo, hasHi   bool
	loOpen, hiOpen bool
}

func atLeast(lo float64) bound     { return bound{lo: lo, hasLo: true} }
func greaterThan(lo float64) bound { return bound{lo: lo, hasLo: true, loOpen: true} }
func between(lo, hi float64) bound { return bound{lo: lo, hi: hi, hasLo: true, hasHi: true} }
func aboveUpTo(lo, hi float64) bound {
	return bound{lo: lo, hi: hi, hasLo: true, hasHi: true, loOpen: true}
}

func (b bound) contains(x float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return false
	}
	if b.hasLo && (x < b.lo || (b.loOpen && x == b.lo)) {
		return false
	}
	if b.hasHi && (x > b.hi || (b.hiOpen && x == b.hi)) {
		return false
	}
	return true
}

// String describes the interval as the end of "must be ...".
func (b bound) String() string {
	lo := fmt.Sprintf("at least %g", b.lo)
	if b.loOpen {
		lo = fmt.Sprintf("greater than %g", b.lo)
	}
	switch {
	case b.hasLo && b.hasHi && !b.loOpen && !b.hiOpen:
		return fmt.Sprintf("between %g and %g", b.lo, b.hi)
	case b.hasLo && b.hasHi:
		hi := fmt.Sprintf("at most %g", b.hi)
		if b.hiOpen {
			hi = fmt.Sprintf("less than %g", b.hi)
		}
		return lo + " and " + hi
	case b.hasLo:
		return lo
	default:
		return "a finite number"
	}
}

func (d *decoder) outOfRange(rng hcl.Range, expr hcl.Expression, path string, b bound, got string) {
	d.errorf(rng, expr, "Value out of range",
		"%s must be %s, but it is %s. Change it to a value that is %s.", path, b, got, b)
}

// wholeNumber converts an exact integer within int64 range.
func wholeNumber(v cty.Value) (int64, bool) {
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return 0, false
	}
	i, acc := bf.Int64()
	return i, acc == big.Exact
}

// numberText formats x like x.Text('g', prec), but in constant time for numbers far
// outside float64's range: big.Float's decimal conversion takes time and memory
// proportional to the exponent, 10 s for 1e9999999.
func numberText(x *big.Float, prec int) string {
	if x.IsInf() {
		return x.String()
	}
	if exp := x.MantExp(nil); exp > -3000 && exp < 3000 {
		return x.Text('g', prec)
	}
	// x = mant × 2^exp with 0.5 <= |mant| < 1: log10|x| = log10|mant| + exp·log10(2).
	mant := new(big.Float)
	exp := x.MantExp(mant)
	m, _ := mant.Float64()
	l := math.Log10(math.Abs(m)) + float64(exp)*math.Log10(2)
	e10 := math.Floor(l)
	lead := math.Copysign(math.Pow(10, l-e10), m)
	if prec < 0 || prec > 6 {
		prec = 6 // float64 logarithms of such exponents keep about that many digits
	}
	lead, _ = strconv.ParseFloat(strconv.FormatFloat(lead, 'g', prec, 64), 64)
	if math.Abs(lead) >= 10 { // 9.9999996 rounded up
		lead, e10 = lead/10, e10+1
	}
	return strconv.FormatFloat(lead, 'g', prec, 64) + "e" + strconv.FormatFloat(e10, 'f', 0, 64)
}

// tooLargeInt says why v, a number, is beyond what an int64 counts ("larger than
// 9.2e18, the most budget.env_steps can count"), or returns "" when it is within range.
// what names the counter.
func tooLargeInt(v cty.Value, what string) string {
	bf := v.AsBigFloat()
	switch {
	case bf.IsInf():
		return "which is not a finite number"
	case bf.Cmp(new(big.Float).SetInt64(math.MaxInt64)) > 0:
		return "larger than 9.2e18, the most " + what + " can count"
	case bf.Cmp(new(big.Float).SetInt64(math.MinInt64)) < 0:
		return "smaller than -9.2e18, the least " + what + " can count"
	}
	return ""
}

// setInt64 decodes a whole-number attribute within b into dst.
func (d *decoder) setInt64(attrs hcl.Attributes, prefix, name string, dst *int64, b bound) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.Number, kindWhole)
	if !ok {
		return
	}
	rng := attr.Expr.Range()
	i, whole := wholeNumber(v)
	if msg := tooLargeInt(v, path); msg != "" {
		d.errorf(rng, attr.Expr, "Value out of range", "%s is %s, %s. Change it to a value that is %s.", path, numberText(v.AsBigFloat(), 4), msg, b)
		return
	}
	if !whole {
		d.errorf(rng, attr.Expr, "Whole number required",
			"%s counts something, so it must be a whole number, but it is %s. Round it to a whole number.",
			path, numberText(v.AsBigFloat(), -1))
		return
	}
	if !b.contains(float64(i)) {
		d.outOfRange(rng, attr.Expr, path, b, fmt.Sprint(i))
		return
	}
	*dst = i
	d.src.record(path, rng)
}

// setInt is setInt64 for int fields.
func (d *decoder) setInt(attrs hcl.Attributes, prefix, name string, dst *int, b bound) {
	i := int64(*dst)
	d.setInt64(attrs, prefix, name, &i, b)
	*dst = int(i)
}

// setFloat decodes a number attribute within b into dst.
func (d *decoder) setFloat(attrs hcl.Attributes, prefix, name string, dst *float64, b bound) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.Number, kindNumber)
	if !ok {
		return
	}
	rng := attr.Expr.Range()
	f, _ := v.AsBigFloat().Float64()
	if math.IsInf(f, 0) {
		d.errorf(rng, attr.Expr, "Value out of range",
			"%s is %s, which is not a finite number: it is beyond ±1.8e308, the largest a 64-bit float holds. Change it to a value that is %s.",
			path, numberText(v.AsBigFloat(), 4), b)
		return
	}
	if !b.contains(f) {
		d.outOfRange(rng, attr.Expr, path, b, numberText(v.AsBigFloat(), 10))
		return
	}
	*dst = f
	d.src.record(path, rng)
}

// setBool decodes a bool attribute into dst.
func (d *decoder) setBool(attrs hcl.Attributes, prefix, name string, dst *bool) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.Bool, kindBool)
	if !ok {
		return
	}
	*dst = v.True()
	d.src.record(path, attr.Expr.Range())
}

// setEnum decodes a string attribute that must be one of allowed into dst.
func (d *decoder) setEnum(attrs hcl.Attributes, prefix, name string, dst *string, allowed []string) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.String, kindString)
	if !ok {
		return
	}
	rng := attr.Expr.Range()
	s := v.AsString()
	if !contains(allowed, s) {
		d.errorf(rng, attr.Expr, "Unsupported value",
			"%s cannot be %q. Use one of: %s.", path, s, quoteList(allowed))
		return
	}
	*dst = s
	d.src.record(path, rng)
}

// setEnumAliased is setEnum that also accepts the deprecated spellings in aliases (old →
// current): such a value resolves to the current one, with a warning that names it.
func (d *decoder) setEnumAliased(attrs hcl.Attributes, prefix, name string, dst *string, allowed []string, aliases map[string]string) {
	if attr, ok := attrs[name]; ok {
		if v, diags := attr.Expr.Value(d.ctx); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			if cur, old := aliases[v.AsString()]; old {
				path := joinPath(prefix, name)
				rng := attr.Expr.Range()
				d.diags = append(d.diags, &hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  "Deprecated value",
					Detail:   fmt.Sprintf("%s = %q is the old spelling of %q and means the same; write %q instead.", path, v.AsString(), cur, cur),
					Subject:  rng.Ptr(),
				})
				*dst = cur
				d.src.record(path, rng)
				return
			}
		}
	}
	d.setEnum(attrs, prefix, name, dst, allowed)
}

// setString decodes a free-form string attribute into dst.
func (d *decoder) setString(attrs hcl.Attributes, prefix, name string, dst *string) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.String, kindString)
	if !ok {
		return
	}
	*dst = v.AsString()
	d.src.record(path, attr.Expr.Range())
}

// setDuration decodes a Go duration string into dst. The number 0 is
// accepted too (it converts to the string "0"). positive demands > 0,
// otherwise >= 0 is required.
func (d *decoder) setDuration(attrs hcl.Attributes, prefix, name string, dst *jsondur.Duration, positive bool) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.String, kindDuration)
	if !ok {
		return
	}
	rng := attr.Expr.Range()
	dur, err := time.ParseDuration(v.AsString())
	if err != nil {
		d.errorf(rng, attr.Expr, "Invalid duration",
			"%s must be a Go duration, but %q is not one (%s). Write a number followed by a unit without spaces, such as \"5ms\", \"30s\" or \"1h30m\"; valid units are ns, us, ms, s, m and h.",
			path, v.AsString(), err)
		return
	}
	switch {
	case positive && dur <= 0:
		d.errorf(rng, attr.Expr, "Value out of range",
			"%s must be longer than zero, but it is %s. Change it to a positive duration such as \"5ms\".", path, dur)
		return
	case dur < 0:
		d.errorf(rng, attr.Expr, "Value out of range",
			"%s must not be negative, but it is %s. Change it to zero or a positive duration such as \"30m\".", path, dur)
		return
	}
	*dst = jsondur.Duration(dur)
	d.src.record(path, rng)
}

// setInts decodes a non-empty list of whole numbers, each within b, into dst.
func (d *decoder) setInts(attrs hcl.Attributes, prefix, name string, dst *[]int, b bound) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.List(cty.Number), kindWholes)
	if !ok {
		return
	}
	rng := attr.Expr.Range()
	if v.LengthInt() == 0 {
		d.errorf(rng, attr.Expr, "Empty list",
			"%s needs at least one element. Write one or more whole numbers, such as [64, 64].", path)
		return
	}
	out := make([]int, 0, v.LengthInt())
	bad := false
	for i, el := range v.AsValueSlice() {
		elRange := elementRange(attr.Expr, i)
		n, whole := wholeNumber(el)
		if msg := tooLargeInt(el, "an element of "+path); msg != "" {
			bad = true
			d.errorf(elRange, attr.Expr, "Value out of range", "Element %d of %s is %s, %s. Change it to a value that is %s.",
				i, path, numberText(el.AsBigFloat(), 4), msg, b)
			continue
		}
		if !whole {
			bad = true
			d.errorf(elRange, attr.Expr, "Whole number required",
				"Element %d of %s must be a whole number, but it is %s. Round it to a whole number.",
				i, path, numberText(el.AsBigFloat(), -1))
			continue
		}
		if !b.contains(float64(n)) {
			bad = true
			d.outOfRange(elRange, attr.Expr, fmt.Sprintf("Element %d of %s", i, path), b, fmt.Sprint(n))
			continue
		}
		out = append(out, int(n))
	}
	if bad {
		return
	}
	*dst = out
	d.src.record(path, rng)
}
