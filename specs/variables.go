package specs

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Names in variable blocks.
const (
	blockVariable   = "variable"
	attrDefault     = "default"
	attrDescription = "description"
)

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrDefault},
		{Name: attrDescription},
	},
}

// resolveVariables decodes the variable blocks and applies the values of the
// variables files and the -var overrides, returning each variable's value. A
// variable takes its override when there is one, else its value in the last
// variables file that has one, else its default; having none is an error, as
// is a value for a variable the file does not declare.
func (p *Parser) resolveVariables(blocks hcl.Blocks, overrides map[string]string) (map[string]cty.Value, hcl.Diagnostics) {
	d := &decoder{src: newSources(hcl.Range{})}
	values := map[string]cty.Value{}
	labels := map[string]hcl.Range{}
	failed := map[string]bool{} // a value was given but already reported as wrong
	for _, block := range blocks {
		if block.Type != blockVariable {
			continue
		}
		name, nameRange := block.Labels[0], block.LabelRanges[0]
		if first, dup := labels[name]; dup {
			d.errorf(nameRange, nil, "Duplicate variable declaration",
				"A variable named %q was already declared %s. Remove one declaration or rename it.", name, at(first))
			continue
		}
		if !hclsyntax.ValidIdentifier(name) {
			d.errorf(nameRange, nil, "Invalid variable name",
				"The variable name %q cannot be referred to as var.%s. Use letters, digits, '_' and '-', starting with a letter.", name, name)
			continue
		}
		labels[name] = nameRange
		c := d.content(block.Body, variableSchema)
		var description string
		d.setString(c.Attributes, blockVariable, attrDescription, &description)
		if attr, ok := c.Attributes[attrDefault]; ok {
			if v, ok := d.variableDefault(name, attr); ok {
				values[name] = v
			} else {
				failed[name] = true
			}
		}
	}

	// A given value replaces the default, and a good one a broken default. Variables files
	// come first, so that -var wins.
	give := func(name string, nameRange hcl.Range, how string, value func() (cty.Value, hcl.Diagnostics)) {
		if _, declared := labels[name]; !declared {
			d.errorf(nameRange, nil, "Value for undeclared variable",
				"A value for %q was given %s, but the spec declares no variable of that name. Add a block variable %q { default = ... } to the spec, or correct the name%s.",
				name, how, name, declaredHint(boolSet(labels)))
			return
		}
		v, diags := value()
		d.diags = append(d.diags, diags...)
		if diags.HasErrors() {
			failed[name] = true
			return
		}
		if n := valueBytes(v); n > maxVariableBytes {
			d.errorf(nameRange, nil, "Variable value too large",
				"The value of %q given %s is about %d bytes; a variable's value may be at most %d bytes. Give a shorter value.", name, how, n, maxVariableBytes)
			failed[name] = true
			return
		}
		values[name] = v
		delete(failed, name)
	}
	for _, fv := range p.varFiles {
		give(fv.name, fv.nameRange, "in the variables file "+fv.nameRange.Filename, func() (cty.Value, hcl.Diagnostics) { return fv.value, nil })
	}
	for _, name := range sortedKeys(overrides) {
		raw := overrides[name]
		file, nameRange, valueStart := p.overrideFile(name, raw)
		give(name, nameRange, "with -var", func() (cty.Value, hcl.Diagnostics) { return overrideValue(raw, file, valueStart) })
	}

	for _, name := range sortedKeys(labels) {
		if _, ok := values[name]; ok || failed[name] {
			continue
		}
		d.errorf(labels[name], nil, "Missing value for variable",
			"Variable %q has no default and no value was given on the command line. Add default = ... to the variable block, or run with -var %s=VALUE.",
			name, name)
	}
	return values, d.diags
}

// variableDefault evaluates a default, which must be a literal: it is read
// before any variable has a value.
func (d *decoder) variableDefault(name string, attr *hcl.Attribute) (cty.Value, bool) {
	if refs := attr.Expr.Variables(); len(refs) > 0 {
		d.errorf(refs[0].SourceRange(), nil, "Variables not allowed",
			"The default of variable %q must be a literal value, because defaults are read before any variable has a value. Write the value itself.",
			name)
		return cty.NilVal, false
	}
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		d.diags = append(d.diags, diags...)
		return cty.NilVal, false
	}
	if n := valueBytes(v); n > maxVariableBytes {
		d.errorf(attr.Expr.Range(), nil, "Variable value too large",
			"The default of variable %q is about %d bytes; a variable's value may be at most %d bytes. Give a shorter value.", name, n, maxVariableBytes)
		return cty.NilVal, false
	}
	return v, true
}

// overrideFile registers the text of a -var as a pseudo source file named
// "<-var NAME>" holding "NAME=VALUE", so diagnostics about it render with a
// snippet. It returns the ranges of the name and the start of the value.
func (p *Parser) overrideFile(name, raw string) (filename string, nameRange hcl.Range, valueStart hcl.Pos) {
	filename = fmt.Sprintf("<-var %s>", name)
	p.files[filename] = &hcl.File{Bytes: []byte(name + "=" + raw)}
	nameEnd := hcl.Pos{Line: 1, Column: 1 + utf8.RuneCountInString(name), Byte: len(name)}
	nameRange = hcl.Range{Filename: filename, Start: hcl.InitialPos, End: nameEnd}
	valueStart = hcl.Pos{Line: 1, Column: nameEnd.Column + 1, Byte: nameEnd.Byte + 1}
	return filename, nameRange, valueStart
}

// overrideValue interprets the text of a -var as an HCL expression: 5000 is
// a number, "sync" (with quotes) a string, [1, 2] a list, true a bool. Text
// that is not a valid literal expression, such as a bare word (sync) or
// 30m, is taken as the string it spells, unless it opens like an
// expression ( " [ { ( ), in which case the parse error is reported.
func overrideValue(raw, filename string, start hcl.Pos) (cty.Value, hcl.Diagnostics) {
	if diags := checkSource(filename, []byte(raw), start, true); diags.HasErrors() {
		return cty.NilVal, diags
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), filename, start)
	if syn, ok := expr.(hclsyntax.Expression); ok && !diags.HasErrors() {
		_ = hclsyntax.VisitAll(syn, func(n hclsyntax.Node) hcl.Diagnostics {
			if f, ok := n.(*hclsyntax.ForExpr); ok && !diags.HasErrors() {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "For expressions not supported",
					Detail:   "A -var value must be a literal, not a for expression. Write the list out, such as [64, 64].",
					Subject:  f.SrcRange.Ptr(),
				})
			}
			return nil
		})
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
	}
	if !diags.HasErrors() && len(expr.Variables()) == 0 {
		v, evalDiags := expr.Value(nil)
		if !evalDiags.HasErrors() {
			return v, nil
		}
		diags = evalDiags
	}
	trimmed := strings.TrimSpace(raw)
	if trimmed != "" && strings.ContainsRune(`"[{(`, rune(trimmed[0])) {
		if !diags.HasErrors() {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Variables not allowed",
				Detail:   "A -var value must be a literal; it cannot refer to variables. Write the value itself.",
				Subject:  expr.Range().Ptr(),
			})
		}
		return cty.NilVal, diags
	}
	return cty.StringVal(raw), nil
}

func boolSet(m map[string]hcl.Range) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// evalContext exposes the variables to expressions as var.NAME.
func evalContext(values map[string]cty.Value) *hcl.EvalContext {
	return &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(values)}}
}
