package specs

import (
	"fmt"
	"sort"
	"strings"

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
