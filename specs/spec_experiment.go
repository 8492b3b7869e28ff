package specs

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Names at the top level and in the experiment block.
const (
	blockExperiment = "experiment"
	attrSeeds       = "seeds"
	attrMaxParallel = "max_parallel"
	attrBaseline    = "baseline"
)

// Experiment is a fully resolved spec: every arm has every field set, so it
// can be executed without looking at the HCL again. It is plain data and
// round-trips through encoding/json.
type Experiment struct {
	// Name is the experiment block's label.
	Name string `json:"name"`
	// Seeds are the RNG seeds; each arm runs once per seed, in this order.
	Seeds []uint64 `json:"seeds"`
	// MaxParallel is the number of runs executing at once.
	MaxParallel int `json:"max_parallel"`
	// Baseline is the arm that reports compare the others against.
	Baseline string `json:"baseline"`
	// Arms holds BaseArm first, then one arm per ablation in file order.
	Arms []Arm `json:"arms"`
	// Hash is ComputeHash() at parse time: hex SHA-256 of the canonical JSON
	// of Name, Seeds, MaxParallel, Baseline and Arms.
	Hash string `json:"hash"`
}

// Arm is one named configuration of the experiment.
type Arm struct {
	// Name is BaseArm or an ablation block's label.
	Name string `json:"name"`
	// Config is the arm's fully resolved configuration.
	Config Config `json:"config"`
}

// Config is everything one run needs besides its seed.
type Config struct {
	Budget     Budget     `json:"budget"`
	Env        Env        `json:"env"`
	Policy     Policy     `json:"policy"`
	Algorithm  Algorithm  `json:"algorithm"`
	Pipeline   Pipeline   `json:"pipeline"`
	Checkpoint Checkpoint `json:"checkpoint"`
	Debug      Debug      `json:"debug"`
	WorldModel WorldModel `json:"world_model"`
	Evaluation Evaluation `json:"evaluation"`
	// Resources is omitted from the JSON while it is zero, so that specs without a resources
	// block keep their hash.
	Resources Resources `json:"resources,omitzero"`
	// Pretrain is the behaviour-cloning warm start, omitted from the JSON while off.
	Pretrain Pretrain `json:"pretrain,omitzero"`
	// Metrics is what a run writes besides its metrics files, omitted from the JSON while
	// it is the default.
	Metrics Metrics `json:"metrics,omitzero"`
}

// Clone returns a deep copy of c; the copy shares no slices or pointed-to blocks with c.
func (c Config) Clone() Config {
	c.Policy.Hidden = append([]int(nil), c.Policy.Hidden...)
	c.WorldModel.ObsHidden = append([]int(nil), c.WorldModel.ObsHidden...)
	c.WorldModel.RewHidden = append([]int(nil), c.WorldModel.RewHidden...)
	if px := c.WorldModel.Pixels; px != nil {
		cp := *px
		c.WorldModel.Pixels = &cp
	}
	return c
}

// StepsPerUpdate is how many real env steps one trainer update consumes. With the world
// model on, only the share the imagination ratio leaves to real data counts, max(1, batch −
// round(ratio·batch)). In sync mode every env collects the same whole number of steps per
// round, so that is rounded up to a multiple of the number of envs; in async mode it is used
// as is (an update takes more real steps while B_img is short, so the plan is an upper bound
// on the updates).
func (c Config) StepsPerUpdate() int64 {
	b := int64(max(1, c.Algorithm.BatchSteps))
	if w := c.WorldModel; w.Enabled {
		b = max(1, b-int64(math.Round(w.ImaginationRatio*float64(b))))
	}
	if c.Pipeline.Mode == ModeSync {
		n := int64(max(1, c.Pipeline.Workers*c.Pipeline.EnvsPerWorker))
		return (b + n - 1) / n * n
	}
	return b
}

// TotalUpdates is the run's planned number of updates, ceil(budget.env_steps /
// StepsPerUpdate): the horizon over which an annealed learning rate decays.
func (c Config) TotalUpdates() int64 {
	if c.Budget.EnvSteps <= 0 {
		return 0
	}
	per := c.StepsPerUpdate()
	return (c.Budget.EnvSteps + per - 1) / per
}

// Arm returns the arm called name and whether it exists.
func (e *Experiment) Arm(name string) (Arm, bool) {
	for _, a := range e.Arms {
		if a.Name == name {
			return a, true
		}
	}
	return Arm{}, false
}

var topSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: blockVariable, LabelNames: []string{"name"}},
		{Type: blockExperiment, LabelNames: []string{"name"}},
	},
}

// configBlocks are the blocks that make up a Config; both the experiment
// block and ablation blocks accept them.
var configBlocks = []hcl.BlockHeaderSchema{
	{Type: blockBudget},
	{Type: blockEnv, LabelNames: []string{"kind"}},
	{Type: blockPolicy},
	{Type: blockAlgorithm, LabelNames: []string{"name"}},
	{Type: blockPipeline},
	{Type: blockCheckpoint},
	{Type: blockDebug},
	{Type: blockWorldModel},
	{Type: blockEvaluation},
	{Type: blockResources},
	{Type: blockPretrain},
	{Type: blockMetrics},
}

var experimentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: attrSeeds},
		{Name: attrMaxParallel},
		{Name: attrBaseline},
	},
	Blocks: append(append([]hcl.BlockHeaderSchema(nil), configBlocks...),
		hcl.BlockHeaderSchema{Type: blockAblation, LabelNames: []string{"name"}}),
}

// applyConfig applies the config blocks among blocks onto cfg, leaving every
// field that no block writes as it was.
func (d *decoder) applyConfig(blocks hcl.Blocks, cfg *Config) {
	if b := d.single(blocks, blockBudget); b != nil {
		d.decodeBudget(b, &cfg.Budget)
	}
	if b := d.single(blocks, blockEnv); b != nil {
		d.decodeEnv(b, &cfg.Env)
	}
	if b := d.single(blocks, blockPolicy); b != nil {
		d.decodePolicy(b, &cfg.Policy)
	}
	if b := d.single(blocks, blockAlgorithm); b != nil {
		d.decodeAlgorithm(b, &cfg.Algorithm)
	}
	if b := d.single(blocks, blockPipeline); b != nil {
		d.decodePipeline(b, &cfg.Pipeline)
	}
	if b := d.single(blocks, blockCheckpoint); b != nil {
		d.decodeCheckpoint(b, &cfg.Checkpoint)
	}
	if b := d.single(blocks, blockDebug); b != nil {
		d.decodeDebug(b, &cfg.Debug)
	}
	if b := d.single(blocks, blockWorldModel); b != nil {
		d.decodeWorldModel(b, &cfg.WorldModel)
	}
	if b := d.single(blocks, blockEvaluation); b != nil {
		d.decodeEvaluation(b, &cfg.Evaluation)
	}
	if b := d.single(blocks, blockResources); b != nil {
		d.decodeResources(b, &cfg.Resources)
	}
	if b := d.single(blocks, blockPretrain); b != nil {
		d.decodePretrain(b, &cfg.Pretrain)
	}
	if b := d.single(blocks, blockMetrics); b != nil {
		d.decodeMetrics(b, &cfg.Metrics)
	}
}

// decodeExperiment decodes the experiment block into an Experiment whose arms
// are not yet finalised (see finalize), plus the sources of each arm.
func (d *decoder) decodeExperiment(block *hcl.Block) (*Experiment, []*sources) {
	exp := &Experiment{
		Name:        block.Labels[0],
		Seeds:       DefaultSeeds(),
		MaxParallel: DefaultMaxParallel,
		Baseline:    DefaultBaseline,
	}
	if !validName(exp.Name) {
		d.errorf(block.LabelRanges[0], nil, "Invalid experiment name",
			"The experiment name %q is used in workflow IDs and directory names, so it must start with a letter or digit and contain only letters, digits, '_', '-' and '.'. Rename the experiment.",
			exp.Name)
	}

	base := newSources(block.DefRange)
	d.src = base
	c := d.content(block.Body, experimentSchema)
	d.setSeeds(c.Attributes, &exp.Seeds)
	d.setInt(c.Attributes, "", attrMaxParallel, &exp.MaxParallel, atLeast(1))
	d.setString(c.Attributes, "", attrBaseline, &exp.Baseline)

	cfg := DefaultConfig()
	d.applyConfig(c.Blocks, &cfg)
	d.requireBase(block, c.Blocks)
	exp.Arms = []Arm{{Name: BaseArm, Config: cfg}}
	srcs := []*sources{base}

	arms, armSrcs := d.decodeAblations(c.Blocks, cfg, base)
	exp.Arms = append(exp.Arms, arms...)
	srcs = append(srcs, armSrcs...)

	// baseline is checked once all arm names are known; base.own tells that
	// the attribute decoded cleanly (otherwise it was reported already).
	if attr, ok := c.Attributes[attrBaseline]; ok && base.own[attrBaseline] {
		if _, found := exp.Arm(exp.Baseline); !found {
			names := make([]string, len(exp.Arms))
			for i, a := range exp.Arms {
				names[i] = a.Name
			}
			d.errorf(attr.Expr.Range(), attr.Expr, "Unknown baseline arm",
				"No arm is named %q. The arms are %s. Set baseline to one of them, or add an ablation %q block.",
				exp.Baseline, quoteList(names), exp.Baseline)
		}
	}
	return exp, srcs
}

// requireBase reports what the base arm must write: a budget block with
// env_steps and an env block. It runs after applyConfig, so a duplicate block
// has been reported already and only the first of each type matters.
func (d *decoder) requireBase(exp *hcl.Block, blocks hcl.Blocks) {
	budget := firstBlock(blocks, blockBudget)
	switch {
	case budget == nil:
		d.errorf(exp.DefRange, nil, "Missing budget block",
			"The experiment must have a budget block that sets env_steps, the number of environment steps per run. Add: budget { env_steps = 100000 }.")
	case !hasAttr(budget, attrEnvSteps):
		d.errorf(budget.DefRange, nil, "Missing required argument",
			"The budget block must set env_steps, the number of environment steps per run. Add a line such as env_steps = 100000.")
	}
	if firstBlock(blocks, blockEnv) == nil {
		d.errorf(exp.DefRange, nil, "Missing env block",
			"The experiment must have an env block naming the environment, such as env \"cartpole\" {}. Known kinds: %s.",
			quoteList(envKinds()))
	}
}

func firstBlock(blocks hcl.Blocks, typ string) *hcl.Block {
	for _, b := range blocks {
		if b.Type == typ {
			return b
		}
	}
	return nil
}

// hasAttr reports whether block's body writes attribute name, without
// decoding it.
func hasAttr(block *hcl.Block, name string) bool {
	c, _, _ := block.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: name}}})
	_, ok := c.Attributes[name]
	return ok
}

// setSeeds decodes the seeds list: non-empty, unique whole numbers >= 0.
func (d *decoder) setSeeds(attrs hcl.Attributes, dst *[]uint64) {
	v, attr, ok := d.value(attrs, attrSeeds, attrSeeds, cty.List(cty.Number), kindWholes)
	if !ok {
		return
	}
	rng := attr.Expr.Range()
	if v.LengthInt() == 0 {
		d.errorf(rng, attr.Expr, "Empty seed list",
			"seeds must list at least one seed; every arm runs once per seed. Write for example seeds = [1, 2, 3].")
		return
	}
	seen := map[uint64]int{}
	var out []uint64
	bad := false
	for i, el := range v.AsValueSlice() {
		elRange := elementRange(attr.Expr, i)
		s, valid := seedValue(el.AsBigFloat())
		if !valid {
			bad = true
			d.errorf(elRange, attr.Expr, "Invalid seed",
				"Seeds must be whole numbers from 0 to %d, but element %d is %s. Change it to such a number.",
				uint64(1<<64-1), i, numberText(el.AsBigFloat(), -1))
			continue
		}
		if first, dup := seen[s]; dup {
			bad = true
			d.errorf(elRange, attr.Expr, "Duplicate seed",
				"Seed %d is listed twice (elements %d and %d). A repeated seed would run the same arm twice; remove one of them.",
				s, first, i)
			continue
		}
		seen[s] = i
		out = append(out, s)
	}
	if bad {
		return
	}
	*dst = out
	d.src.record(attrSeeds, rng)
}

func seedValue(f *big.Float) (uint64, bool) {
	if !f.IsInt() || f.Sign() < 0 {
		return 0, false
	}
	u, acc := f.Uint64()
	return u, acc == big.Exact
}

// validName reports whether s may name an experiment or arm: it appears in
// workflow IDs, run IDs ("<arm>/seed-<seed>") and directory names.
func validName(s string) bool {
	if s == "" || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "_") {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// String returns a one-line summary, for logs.
func (e *Experiment) String() string {
	return fmt.Sprintf("experiment %q: %d arms x %d seeds (hash %.12s)", e.Name, len(e.Arms), len(e.Seeds), e.Hash)
}
