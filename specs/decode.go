package specs

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// decoder applies HCL attributes onto existing Go values. Every setter leaves
// its destination untouched when the attribute is absent, which is exactly the
// override semantics of ablations: the same code decodes the base onto
// DefaultConfig() and each ablation onto a copy of the base.
//
// Diagnostics accumulate in diags so one pass reports every problem of the
// decode phase.
type decoder struct {
	ctx      *hcl.EvalContext
	declared map[string]bool // declared variable names, for reference checks
	diags    hcl.Diagnostics
	src      *sources // where the values of the arm being decoded came from
}

// sources remembers, for one arm, the source range of the expression that set
// each attribute path ("pipeline.replay_capacity"), so that checks spanning
// several attributes can point at the text that caused them.
type sources struct {
	at  map[string]hcl.Range
	own map[string]bool // written by this arm's own block, not inherited
	def hcl.Range       // the arm's block header, the fallback subject
}

func newSources(def hcl.Range) *sources {
	return &sources{at: map[string]hcl.Range{}, own: map[string]bool{}, def: def}
}

// inherit returns sources for an ablation that starts from the arm s.
func (s *sources) inherit(def hcl.Range) *sources {
	n := newSources(def)
	for k, v := range s.at {
		n.at[k] = v
	}
	return n
}

func (s *sources) record(path string, rng hcl.Range) {
	s.at[path] = rng
	s.own[path] = true
}

// blame picks the subject for a problem involving paths: the first path this
// arm wrote itself, else the first path it inherited, else the arm's header.
func (s *sources) blame(paths ...string) hcl.Range {
	for _, p := range paths {
		if s.own[p] {
			return s.at[p]
		}
	}
	for _, p := range paths {
		if r, ok := s.at[p]; ok {
			return r
		}
	}
	return s.def
}

// errorf records an error diagnostic. expr, when not nil, lets the text
// renderer print the values of the variables the expression refers to.
func (d *decoder) errorf(subject hcl.Range, expr hcl.Expression, summary, detailFormat string, args ...any) {
	diag := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detailFormat, args...),
		Subject:  subject.Ptr(),
	}
	if expr != nil {
		diag.Expression = expr
		diag.EvalContext = d.ctx
	}
	d.diags = append(d.diags, diag)
}

// content extracts body's attributes and blocks against schema, adding the
// list of allowed names to HCL's "unsupported" diagnostics when HCL found no
// spelling suggestion.
func (d *decoder) content(body hcl.Body, schema *hcl.BodySchema) *hcl.BodyContent {
	content, diags := body.Content(schema)
	for _, diag := range diags {
		if strings.Contains(diag.Detail, "Did you mean") {
			continue
		}
		switch diag.Summary {
		case "Unsupported argument":
			diag.Detail += " " + allowedList("arguments", attributeNames(schema))
		case "Unsupported block type":
			diag.Detail += " " + allowedList("blocks", blockNames(schema))
		}
	}
	d.diags = append(d.diags, diags...)
	return content
}

func attributeNames(schema *hcl.BodySchema) []string {
	var names []string
	for _, a := range schema.Attributes {
		names = append(names, a.Name)
	}
	return names
}

func blockNames(schema *hcl.BodySchema) []string {
	var names []string
	for _, b := range schema.Blocks {
		names = append(names, b.Type)
	}
	return names
}

func allowedList(what string, names []string) string {
	if len(names) == 0 {
		return fmt.Sprintf("No %s are allowed here; remove it.", what)
	}
	return fmt.Sprintf("Remove it or use one of the %s allowed here: %s.", what, strings.Join(names, ", "))
}

// single returns the first block of type typ in blocks and reports every
// further one as a duplicate. It returns nil when there is none.
func (d *decoder) single(blocks hcl.Blocks, typ string) *hcl.Block {
	var first *hcl.Block
	for _, b := range blocks {
		if b.Type != typ {
			continue
		}
		if first == nil {
			first = b
			continue
		}
		d.errorf(b.DefRange, nil, fmt.Sprintf("Duplicate %s block", typ),
			"Only one %s block is allowed here, and one was already written %s. Merge the two blocks into one.",
			typ, at(first.DefRange))
	}
	return first
}

// checkRefs reports every reference in expr that is not var.NAME for a
// declared variable. HCL's own messages for these are about "objects" and
// "attributes", which says little to someone writing a spec.
func (d *decoder) checkRefs(expr hcl.Expression) bool {
	ok := true
	for _, tr := range expr.Variables() {
		root := tr.RootName()
		rng := tr.SourceRange()
		if root != "var" {
			ok = false
			hint := ""
			if len(tr) == 1 {
				hint = fmt.Sprintf(" If you meant the text %q, put it in double quotes: \"%s\".", root, root)
			}
			d.errorf(rng, nil, "Unsupported reference",
				"There is nothing named %q to refer to. Expressions may refer only to input variables, written var.NAME.%s",
				root, hint)
			continue
		}
		var name string
		if len(tr) >= 2 {
			if step, isAttr := tr[1].(hcl.TraverseAttr); isAttr {
				name = step.Name
			}
		}
		if name == "" {
			ok = false
			d.errorf(rng, nil, "Invalid variable reference",
				"A reference to an input variable names it after a dot, like var.steps. Add the variable's name.")
			continue
		}
		if !d.declared[name] {
			ok = false
			d.errorf(rng, nil, "Reference to undeclared variable",
				"No variable named %q is declared in this file. Add a block variable %q { default = ... } or correct the name%s.",
				name, name, declaredHint(d.declared))
		}
	}
	return ok
}

func declaredHint(declared map[string]bool) string {
	if len(declared) == 0 {
		return ""
	}
	names := sortedKeys(declared)
	return "; the declared variables are " + strings.Join(names, ", ")
}

// value evaluates attribute name of attrs and converts it to want. It returns
// the attribute too (for ranges); ok is false when the attribute is absent or
// a diagnostic was recorded.
func (d *decoder) value(attrs hcl.Attributes, name, path string, want cty.Type, kind valueKind) (cty.Value, *hcl.Attribute, bool) {
	attr, present := attrs[name]
	if !present {
		return cty.NilVal, nil, false
	}
	if !d.checkRefs(attr.Expr) {
		return cty.NilVal, attr, false
	}
	v, diags := attr.Expr.Value(d.ctx)
	if diags.HasErrors() {
		d.diags = append(d.diags, diags...)
		return cty.NilVal, attr, false
	}
	if v.IsNull() {
		d.errorf(attr.Expr.Range(), attr.Expr, "Null value not allowed",
			"%s must be %s, not null. Remove the attribute to keep the default, or give it a value.", path, kind.what)
		return cty.NilVal, attr, false
	}
	if !v.IsWhollyKnown() {
		d.errorf(attr.Expr.Range(), attr.Expr, "Unknown value",
			"The value of %s cannot be known while reading the spec. Use a literal or a variable.", path)
		return cty.NilVal, attr, false
	}
	if want.IsListType() && (v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType()) && v.LengthInt() > maxListLen {
		d.errorf(attr.Expr.Range(), nil, "List too long",
			"%s has %d elements; lists in a spec may have at most %d. Shorten it.", path, v.LengthInt(), maxListLen)
		return cty.NilVal, attr, false
	}
	cv, err := convertValue(v, want)
	if err != nil {
		d.errorf(attr.Expr.Range(), attr.Expr, "Incorrect attribute value type",
			"%s must be %s, but the given value is a %s (%s). %s",
			path, kind.what, v.Type().FriendlyName(), err, kind.fix)
		return cty.NilVal, attr, false
	}
	return cv, attr, true
}

// convertValue is convert.Convert, but converts a sequence to a list element by element:
// cty's own conversion unifies the element types with a pairwise sort, quadratic in the
// length of the list. Null elements are refused.
func convertValue(v cty.Value, want cty.Type) (cty.Value, error) {
	seq := v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType()
	if !want.IsListType() || !seq {
		return convert.Convert(v, want)
	}
	elems := make([]cty.Value, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, el := it.Element()
		if el.IsNull() {
			return cty.NilVal, fmt.Errorf("element %d is null", len(elems))
		}
		cel, err := convert.Convert(el, want.ElementType())
		if err != nil {
			return cty.NilVal, fmt.Errorf("element %d: %w", len(elems), err)
		}
		elems = append(elems, cel)
	}
	if len(elems) == 0 {
		return cty.ListValEmpty(want.ElementType()), nil
	}
	return cty.ListVal(elems), nil
}

// valueKind describes the expected type of an attribute for messages.
type valueKind struct {
	what string // "a number"
	fix  string // a sentence saying how to write one
}

var (
	kindNumber   = valueKind{"a number", "Write a number without quotes, such as 0.5."}
	kindWhole    = valueKind{"a whole number", "Write a whole number without quotes, such as 4."}
	kindString   = valueKind{"a string", "Write the text in double quotes, such as \"async\"."}
	kindBool     = valueKind{"true or false", "Write true or false without quotes."}
	kindWholes   = valueKind{"a list of whole numbers", "Write the numbers in brackets, such as [64, 64]."}
	kindDuration = valueKind{"a duration string", "Write a Go duration in quotes, such as \"5ms\", \"30s\" or \"1h30m\"."}
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
func (d *decoder) setDuration(attrs hcl.Attributes, prefix, name string, dst *time.Duration, positive bool) {
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
	*dst = dur
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

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// elementRange is the range of element i when expr is a literal list, so a
// bad element can be pointed at; otherwise it is the whole expression.
func elementRange(expr hcl.Expression, i int) hcl.Range {
	if tuple, ok := expr.(*hclsyntax.TupleConsExpr); ok && i < len(tuple.Exprs) {
		return tuple.Exprs[i].Range()
	}
	return expr.Range()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// at describes where r starts, for details that mention an earlier
// definition ("on line 12, column 3").
func at(r hcl.Range) string {
	return fmt.Sprintf("on line %d, column %d", r.Start.Line, r.Start.Column)
}
