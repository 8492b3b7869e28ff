package specs

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Limits on what the parser accepts. HCL's parser and evaluator recurse once per nesting
// level and per chained operator, and the Go runtime kills the process outright when a
// goroutine's stack overflows, so a spec must be checked before HCL sees it. Real specs
// stay far below every one of these.
const (
	// MaxSpecBytes is the largest spec file accepted.
	MaxSpecBytes = 4 << 20
	// maxNesting bounds how deeply brackets, braces, parentheses, strings and template
	// interpolations may nest.
	maxNesting = 64
	// maxChain bounds the operators, indexes and attribute accesses chained at one
	// nesting level of one expression (1+1+...+1, - - -x, a ? b : c ? d : ...).
	maxChain = 1000
	// maxInterpolations bounds the template interpolations and directives in one file, so
	// that templates cannot multiply a long variable into gigabytes of text.
	maxInterpolations = 1000
	// maxListLen bounds every list in a spec: layer widths, task indices, seeds.
	maxListLen = 1000
	// maxVariableBytes bounds the text of one variable's value.
	maxVariableBytes = 64 << 10
)

// checkSource reports a source that HCL cannot safely parse: too large, too deeply
// nested, or with too long a chain of operators. It works on the lexer's tokens, which
// HCL produces without recursion, so that strings and comments do not count. filename
// and start place the diagnostics; expression is true for the text of a -var.
func checkSource(filename string, src []byte, start hcl.Pos, expression bool) hcl.Diagnostics {
	if len(src) > MaxSpecBytes {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Spec too large",
			Detail: fmt.Sprintf("%s is larger than %d MiB, the most a spec may be. A spec describes one experiment in a few hundred lines; remove what is not part of it.",
				filename, MaxSpecBytes>>20),
			Subject: &hcl.Range{Filename: filename, Start: start, End: start},
		}}
	}
	var toks hclsyntax.Tokens
	if expression {
		toks, _ = hclsyntax.LexExpression(src, filename, start)
	} else {
		toks, _ = hclsyntax.LexConfig(src, filename, start)
	}
	// One frame per open nesting level: what opened it and how long the chain at that
	// level has grown since the last separator.
	type level struct {
		open  hclsyntax.TokenType
		chain int
	}
	stack := []level{{open: hclsyntax.TokenNil}}
	interpolations := 0
	for _, tok := range toks {
		top := &stack[len(stack)-1]
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			if tok.Type == hclsyntax.TokenTemplateInterp || tok.Type == hclsyntax.TokenTemplateControl {
				interpolations++
				if interpolations > maxInterpolations {
					return limitDiag(tok.Range, "Too many template interpolations",
						fmt.Sprintf("This spec has more than %d ${...} and %%{...} sequences in its strings, the most accepted. Write the values out instead.", maxInterpolations))
				}
			}
			// An index a[0] or a template directive chains at the level it opens in.
			top.chain++
			if top.chain > maxChain {
				return chainDiag(tok.Range)
			}
			stack = append(stack, level{open: tok.Type})
			if len(stack)-1 > maxNesting {
				return limitDiag(tok.Range, "Nesting too deep",
					fmt.Sprintf("On line %d, brackets, braces, parentheses and strings nest more than %d levels deep, the most accepted. Flatten the expression.",
						tok.Range.Start.Line, maxNesting))
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			// An unbalanced closer is a syntax error the parser reports; keep the bottom.
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case hclsyntax.TokenComma, hclsyntax.TokenEqual:
			top.chain = 0
		case hclsyntax.TokenNewline:
			// Newlines end an item only in a body or an object; inside brackets and
			// parentheses an expression continues on the next line.
			if top.open == hclsyntax.TokenNil || top.open == hclsyntax.TokenOBrace {
				top.chain = 0
			}
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash,
			hclsyntax.TokenPercent, hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenBang,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan,
			hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq,
			hclsyntax.TokenQuestion, hclsyntax.TokenColon, hclsyntax.TokenDot, hclsyntax.TokenEllipsis:
			top.chain++
			if top.chain > maxChain {
				return chainDiag(tok.Range)
			}
		}
	}
	return nil
}

func chainDiag(rng hcl.Range) hcl.Diagnostics {
	return limitDiag(rng, "Expression too long",
		fmt.Sprintf("On line %d, one expression chains more than %d operators, indexes or attribute accesses, the most accepted. Write the value out instead.",
			rng.Start.Line, maxChain))
}

func limitDiag(rng hcl.Range, summary, detail string) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()}}
}

// checkExpressions reports for expressions. A for expression's result grows with the
// product of the collections it ranges over, nested ones multiply, and specs have no use
// for them: lists in a spec are short and written out.
func checkExpressions(body hcl.Body) hcl.Diagnostics {
	var diags hcl.Diagnostics
	syn, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	_ = hclsyntax.VisitAll(syn, func(n hclsyntax.Node) hcl.Diagnostics {
		if f, ok := n.(*hclsyntax.ForExpr); ok && len(diags) < 10 {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "For expressions not supported",
				Detail:   "Specs do not support for expressions ([for x in ...], {for ...} or %{for ...}). Write the list out, such as [64, 64].",
				Subject:  f.SrcRange.Ptr(),
			})
		}
		return nil
	})
	return diags
}

// valueBytes is a rough size of v: the bytes of its strings plus one per other leaf.
func valueBytes(v cty.Value) int {
	n := 0
	_ = cty.Walk(v, func(_ cty.Path, x cty.Value) (bool, error) {
		switch {
		case x.IsNull() || !x.IsKnown():
			n++
		case x.Type() == cty.String:
			n += len(x.AsString())
		case x.Type().IsPrimitiveType():
			n++
		}
		return true, nil
	})
	return n
}
