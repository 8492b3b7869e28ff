package specs

import "github.com/hashicorp/hcl/v2"

// blockAblation names an arm that differs from the base.
const blockAblation = "ablation"

var ablationSchema = &hcl.BodySchema{Blocks: configBlocks}

// decodeAblations turns each ablation block, in file order, into an arm.
//
// An ablation starts from a deep copy of the decoded base (before
// kind-dependent defaults are filled in, see finalize) and the same block
// decoders as the base are applied to it. Those decoders only assign the
// attributes that are written, at every nesting depth, so an ablation changes
// exactly what it writes and nothing else.
//
// Arms with a duplicate name are decoded too, so their other mistakes are
// reported, but they are not returned.
func (d *decoder) decodeAblations(blocks hcl.Blocks, base Config, baseSrc *sources) ([]Arm, []*sources) {
	var (
		arms []Arm
		srcs []*sources
		seen = map[string]hcl.Range{BaseArm: baseSrc.def}
	)
	for _, block := range blocks {
		if block.Type != blockAblation {
			continue
		}
		name, nameRange := block.Labels[0], block.LabelRanges[0]
		unique := true
		switch first, dup := seen[name]; {
		case name == BaseArm:
			unique = false
			d.errorf(nameRange, nil, "Duplicate arm name",
				"The name %q is reserved for the arm the experiment block itself describes. Rename this ablation.", BaseArm)
		case dup:
			unique = false
			d.errorf(nameRange, nil, "Duplicate arm name",
				"An ablation named %q was already declared %s. Arm names must be unique; rename one of them.", name, at(first))
		case !validName(name):
			unique = false
			d.errorf(nameRange, nil, "Invalid arm name",
				"The arm name %q is used in run IDs and directory names, so it must start with a letter or digit and contain only letters, digits, '_', '-' and '.'. Rename the ablation.", name)
		default:
			seen[name] = nameRange
		}

		cfg := base.Clone()
		d.src = baseSrc.inherit(block.DefRange)
		c := d.content(block.Body, ablationSchema)
		d.applyConfig(c.Blocks, &cfg)
		if unique {
			arms = append(arms, Arm{Name: name, Config: cfg})
			srcs = append(srcs, d.src)
		}
	}
	return arms, srcs
}
