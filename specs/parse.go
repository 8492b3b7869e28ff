package specs

import (
	"io"
	"os"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Parser reads specs and remembers the source of every file it read, so the
// caller can render diagnostics with code snippets:
//
//	p := specs.NewParser()
//	exp, diags := p.ParseFile(path, vars)
//	if diags.HasErrors() {
//		wr := hcl.NewDiagnosticTextWriter(os.Stderr, p.Files(), 78, true)
//		wr.WriteDiagnostics(diags)
//	}
//
// A Parser is not safe for concurrent use.
type Parser struct {
	files map[string]*hcl.File
	// varFiles are the values of the variables files read (ReadVarFile), in order.
	varFiles []varFileValue
}

// NewParser returns a Parser that has read nothing yet.
func NewParser() *Parser {
	return &Parser{files: map[string]*hcl.File{}}
}

// Files returns the files read so far by filename, including one pseudo
// file per -var override named "<-var NAME>". The map is a copy.
func (p *Parser) Files() map[string]*hcl.File {
	out := make(map[string]*hcl.File, len(p.files))
	for k, v := range p.files {
		out[k] = v
	}
	return out
}

// ParseFile reads and decodes the spec at path. vars are -var overrides
// (variable name to raw text). On error the Experiment is nil and the
// diagnostics say what to fix.
func ParseFile(path string, vars map[string]string) (*Experiment, hcl.Diagnostics) {
	return NewParser().ParseFile(path, vars)
}

// Parse is ParseFile on bytes already read; filename is used in diagnostics.
func Parse(filename string, src []byte, vars map[string]string) (*Experiment, hcl.Diagnostics) {
	return NewParser().Parse(filename, src, vars)
}

// ParseFile reads and decodes the spec at path; see the package-level
// ParseFile.
func (p *Parser) ParseFile(path string, vars map[string]string) (*Experiment, hcl.Diagnostics) {
	src, err := readLimited(path)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read file",
			Detail:   "The spec file " + path + " could not be read: " + err.Error() + ". Check the path and its permissions.",
		}}
	}
	return p.Parse(path, src, vars)
}

// readLimited reads path, but no more than one byte past MaxSpecBytes, so that a huge
// file (or /dev/zero) is refused by Parse instead of filling memory.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
}

// Parse decodes src in four phases, stopping after the first phase that
// reports an error, because later phases would mostly repeat it:
//
//  1. size, nesting and syntax;
//  2. top-level structure and variables, with the -var overrides;
//  3. decoding of the base arm and every ablation, attribute by attribute;
//  4. checks between fields of each resolved arm.
//
// Within a phase every problem is reported, sorted by source position.
func (p *Parser) Parse(filename string, src []byte, vars map[string]string) (*Experiment, hcl.Diagnostics) {
	if diags := checkSource(filename, src, hcl.InitialPos, false); diags.HasErrors() {
		p.files[filename] = &hcl.File{Bytes: src}
		return nil, diags
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	p.files[filename] = file
	if !diags.HasErrors() {
		diags = append(diags, checkExpressions(file.Body)...)
	}
	if diags.HasErrors() {
		return nil, sortDiags(diags)
	}

	// Phase 2: structure and variables.
	d := &decoder{src: newSources(hcl.Range{})}
	top := d.content(file.Body, topSchema)
	var expBlock *hcl.Block
	for _, b := range top.Blocks {
		if b.Type != blockExperiment {
			continue
		}
		if expBlock != nil {
			d.errorf(b.DefRange, nil, "Duplicate experiment block",
				"A spec file describes exactly one experiment, and one was already declared %s. Move this experiment into a file of its own.",
				at(expBlock.DefRange))
			continue
		}
		expBlock = b
	}
	// A malformed experiment block (a missing label, say) is already
	// reported by content; do not call it missing as well.
	if expBlock == nil && !d.diags.HasErrors() {
		d.errorf(file.Body.MissingItemRange(), nil, "Missing experiment block",
			"A spec file must contain one experiment block, such as experiment \"quickstart\" { ... }, holding the budget, env and arms. Add one.")
	}
	values, varDiags := p.resolveVariables(top.Blocks, vars)
	diags = append(diags, d.diags...)
	diags = append(diags, varDiags...)
	if diags.HasErrors() {
		return nil, sortDiags(diags)
	}

	// Phase 3: decode every arm.
	d = &decoder{ctx: evalContext(values), declared: map[string]bool{}}
	for name := range values {
		d.declared[name] = true
	}
	exp, srcs := d.decodeExperiment(expBlock)
	if d.diags.HasErrors() {
		return nil, sortDiags(append(diags, d.diags...))
	}

	// Phase 4: checks across fields, on the finalised arms.
	var checks hcl.Diagnostics
	for i := range exp.Arms {
		finalize(&exp.Arms[i].Config)
		checks = append(checks, checkArm(exp.Arms[i], srcs[i])...)
	}
	diags = append(append(diags, d.diags...), dedupe(checks)...)
	if diags.HasErrors() {
		return nil, sortDiags(diags)
	}
	exp.Hash = exp.ComputeHash()
	return exp, sortDiags(diags)
}

// sortDiags orders diagnostics by file and position; those without a subject
// come first.
func sortDiags(diags hcl.Diagnostics) hcl.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a == nil && b != nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		default:
			return a.Start.Byte < b.Start.Byte
		}
	})
	return diags
}
