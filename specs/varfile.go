package specs

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// varFileValue is one assignment of a variables file.
type varFileValue struct {
	name      string
	value     cty.Value
	nameRange hcl.Range
}

// ReadVarFile reads a variables file for the next Parse or ParseFile: HCL attribute
// assignments, name = value, one a line, as in Terraform's .tfvars files; each value is a
// literal. Its values take the place of the variables' defaults, a later file's take the
// place of an earlier one's, and the -var values given to Parse take the place of both. A
// name the spec declares no variable for is reported by Parse, at its line in the file.
func (p *Parser) ReadVarFile(path string) hcl.Diagnostics {
	src, err := readLimited(path)
	if err != nil {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read variables file",
			Detail:   "The variables file " + path + " (-var-file) could not be read: " + err.Error() + ". Check the path and its permissions.",
		}}
	}
	if diags := checkSource(path, src, hcl.InitialPos, false); diags.HasErrors() {
		p.files[path] = &hcl.File{Bytes: src}
		return diags
	}
	file, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	p.files[path] = file
	if !diags.HasErrors() {
		diags = append(diags, checkExpressions(file.Body)...)
	}
	if diags.HasErrors() {
		return sortDiags(diags)
	}
	attrs, diags := file.Body.JustAttributes() // a block is an error: only name = value
	var values []varFileValue
	for _, attr := range attrs {
		if refs := attr.Expr.Variables(); len(refs) > 0 {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Variables not allowed",
				Detail:   "A value in a variables file must be a literal; it cannot refer to variables. Write the value itself.",
				Subject:  refs[0].SourceRange().Ptr(),
			})
			continue
		}
		v, vd := attr.Expr.Value(nil)
		diags = append(diags, vd...)
		if !vd.HasErrors() {
			values = append(values, varFileValue{name: attr.Name, value: v, nameRange: attr.NameRange})
		}
	}
	// In file order, so that the first problem reported is the first in the file.
	slices.SortFunc(values, func(a, b varFileValue) int { return a.nameRange.Start.Byte - b.nameRange.Start.Byte })
	p.varFiles = append(p.varFiles, values...)
	return sortDiags(diags)
}
