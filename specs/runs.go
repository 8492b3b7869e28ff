package specs

import "fmt"

// Run is one arm executed with one seed: the unit the engine schedules.
type Run struct {
	// ID is "<arm>/seed-<seed>", unique within the experiment.
	ID string `json:"id"`
	// Arm is the arm's name.
	Arm string `json:"arm"`
	// Seed seeds every RNG of the run.
	Seed uint64 `json:"seed"`
	// Config is the arm's resolved configuration (a deep copy).
	Config Config `json:"config"`
}

// RunID returns the ID of the run of arm with seed.
func RunID(arm string, seed uint64) string {
	return fmt.Sprintf("%s/seed-%d", arm, seed)
}

// Runs expands the experiment into runs: arms in order ("base" first), and
// within each arm the seeds in order.
func (e *Experiment) Runs() []Run {
	runs := make([]Run, 0, len(e.Arms)*len(e.Seeds))
	for _, arm := range e.Arms {
		for _, seed := range e.Seeds {
			runs = append(runs, Run{
				ID:     RunID(arm.Name, seed),
				Arm:    arm.Name,
				Seed:   seed,
				Config: arm.Config.Clone(),
			})
		}
	}
	return runs
}
