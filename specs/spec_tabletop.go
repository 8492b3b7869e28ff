package specs

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/accerl/accerl/testenv/tabletop"
)

// EnvTabletop is the LIBERO-style tabletop manipulation suites (testenv/tabletop): a 7-D
// delta end-effector action and gripper in [-1, 1], a 46-D state vector (proprioception,
// object positions, joints, the task), two RGB cameras and a language instruction, sparse
// success reward.
const EnvTabletop = "tabletop"

// tasksAll is the value of env.tasks that selects every task of the suite.
const tasksAll = "all"

// decodeTabletop applies the tabletop attributes of an env block onto e. A block that
// switches to tabletop without naming a suite keeps the one it inherited; the suite and the
// task list are checked once the arm is resolved (checkTabletop).
func (d *decoder) decodeTabletop(attrs hcl.Attributes, e *Env) {
	if e.Suite == "" {
		e.Suite = tabletop.SuiteSpatial
	}
	d.setEnum(attrs, blockEnv, attrSuite, &e.Suite, tabletop.Suites())
	task, hasTask := attrs[attrTask]
	tasks, hasTasks := attrs[attrTasks]
	switch {
	case hasTask && hasTasks:
		d.errorf(tasks.NameRange, nil, "Conflicting arguments",
			"env.task and env.tasks both choose the tasks. Keep one: task = 3 trains on one task, tasks = [0, 3] or tasks = %q on several.", tasksAll)
	case hasTask:
		var t int
		d.setInt(attrs, blockEnv, attrTask, &t, atLeast(0))
		e.Tasks = []int{t}
		d.src.record(joinPath(blockEnv, attrTasks), task.Expr.Range())
	case hasTasks:
		d.decodeTaskList(tasks, e)
	}
	if e.ImageSize == 0 {
		e.ImageSize = tabletop.DefaultImageSize
	}
	d.setInt(attrs, blockEnv, attrImageSize, &e.ImageSize, atLeast(1))
	if attr, ok := attrs[attrImageSize]; ok && e.ImageSize > 0 {
		if err := tabletop.ValidateImageSize(e.ImageSize); err != nil {
			d.errorf(attr.Expr.Range(), attr.Expr, "Unsupported image size",
				"env.image_size: %s. Use 16, 32, 64 (the default), 128 or 256.", err)
		}
	}
	if len(e.Cameras) == 0 {
		e.Cameras = tabletop.Cameras()
	}
	d.setStrings(attrs, blockEnv, attrCameras, &e.Cameras, tabletop.Cameras())
	d.setBool(attrs, blockEnv, attrPixels, &e.Pixels)
}

// decodeTaskList decodes env.tasks: "all" or a list of task indices.
func (d *decoder) decodeTaskList(attr *hcl.Attribute, e *Env) {
	path := joinPath(blockEnv, attrTasks)
	if v, diags := attr.Expr.Value(d.ctx); !diags.HasErrors() && v.Type() == cty.String {
		if v.AsString() != tasksAll {
			d.errorf(attr.Expr.Range(), attr.Expr, "Unsupported value",
				"env.tasks cannot be %q. Write %q for every task of the suite, or a list of task indices such as [0, 3].", v.AsString(), tasksAll)
			return
		}
		e.Tasks = nil // all: filled in by finalize
		d.src.record(path, attr.Expr.Range())
		return
	}
	attrs := hcl.Attributes{attrTasks: attr}
	d.setInts(attrs, blockEnv, attrTasks, &e.Tasks, atLeast(0))
}

// setStrings decodes a non-empty list of strings, each one of allowed and none twice, into dst.
func (d *decoder) setStrings(attrs hcl.Attributes, prefix, name string, dst *[]string, allowed []string) {
	path := joinPath(prefix, name)
	v, attr, ok := d.value(attrs, name, path, cty.List(cty.String),
		valueKind{"a list of strings", "Write the names in brackets, such as [\"agentview\", \"wrist\"]."})
	if !ok {
		return
	}
	if v.LengthInt() == 0 {
		d.errorf(attr.Expr.Range(), attr.Expr, "Empty list", "%s needs at least one element. Use some of: %s.", path, quoteList(allowed))
		return
	}
	var out []string
	for i, el := range v.AsValueSlice() {
		s := el.AsString()
		switch {
		case !contains(allowed, s):
			d.errorf(elementRange(attr.Expr, i), attr.Expr, "Unsupported value", "%s cannot contain %q. Use some of: %s.", path, s, quoteList(allowed))
			return
		case contains(out, s):
			d.errorf(elementRange(attr.Expr, i), attr.Expr, "Duplicate value", "%s lists %q twice. Remove one.", path, s)
			return
		}
		out = append(out, s)
	}
	*dst = out
	d.src.record(path, attr.Expr.Range())
}

// finalizeTabletop fills a tabletop arm's defaults that depend on its suite: every task
// when none was chosen, and the suite's episode limit.
func finalizeTabletop(e *Env) {
	if e.Kind != EnvTabletop {
		e.Suite, e.Tasks, e.ImageSize, e.Cameras, e.Pixels = "", nil, 0, nil, false
		return
	}
	if len(e.Tasks) == 0 {
		for t := range tabletop.TaskCount(e.Suite) {
			e.Tasks = append(e.Tasks, t)
		}
	}
	if e.MaxEpisodeSteps == 0 {
		e.MaxEpisodeSteps = tabletop.MaxSteps(e.Suite)
	}
}

// checkTabletop reports task indices outside the arm's suite (an ablation may switch the
// suite under an inherited task list).
func checkTabletop(c Config, src *sources, add func(subject hcl.Range, summary, detail string)) {
	e := c.Env
	if e.Kind != EnvTabletop {
		return
	}
	n := tabletop.TaskCount(e.Suite)
	var bad []string
	seen := map[int]bool{}
	for _, t := range e.Tasks {
		if t >= n || seen[t] {
			bad = append(bad, fmt.Sprint(t))
		}
		seen[t] = true
	}
	if len(bad) > 0 {
		add(src.blame(joinPath(blockEnv, attrTasks), joinPath(blockEnv, attrSuite)), "Unknown task",
			fmt.Sprintf("suite %q has tasks 0 to %d, each listed once; env.tasks has %s. Choose tasks from 0 to %d, or tasks = %q.",
				e.Suite, n-1, strings.Join(bad, ", "), n-1, tasksAll))
	}
}
