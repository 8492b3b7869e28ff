package workflows

import (
	"go.temporal.io/sdk/temporal"

	"github.com/accerl/accerl/specs"
)

// Custom search attributes accerl sets on its workflows, so runs can be found with a visibility
// query (`temporal workflow list --query 'AccerlArm="base"'`, or the Web UI's search box). The
// server must know them before a workflow uses them; worker.StartServer and the CLI's
// connection to an external server register SearchAttributeKeys.
var (
	// SearchExperiment is the experiment's name, on the Experiment workflow and its runs.
	SearchExperiment = temporal.NewSearchAttributeKeyKeyword("AccerlExperiment")
	// SearchSpecHash is the resolved spec's hash (full hex), on the Experiment workflow and its runs.
	SearchSpecHash = temporal.NewSearchAttributeKeyKeyword("AccerlSpecHash")
	// SearchArm is a run's arm ("base" or an ablation's name), on Run workflows.
	SearchArm = temporal.NewSearchAttributeKeyKeyword("AccerlArm")
	// SearchSeed is a run's seed, on Run workflows. Seeds above 2^63-1 wrap to negative values.
	SearchSeed = temporal.NewSearchAttributeKeyInt64("AccerlSeed")
)

// SearchAttributeKeys lists every custom search attribute accerl uses, for registration.
var SearchAttributeKeys = []temporal.SearchAttributeKey{SearchExperiment, SearchSpecHash, SearchArm, SearchSeed}

// ExperimentSearchAttributes are the search attributes of the Experiment workflow of a spec.
func ExperimentSearchAttributes(name, specHash string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(SearchExperiment.ValueSet(name), SearchSpecHash.ValueSet(specHash))
}

// RunSearchAttributes are the search attributes of the Run workflow of run r.
func RunSearchAttributes(name, specHash string, r specs.Run) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		SearchExperiment.ValueSet(name),
		SearchSpecHash.ValueSet(specHash),
		SearchArm.ValueSet(r.Arm),
		SearchSeed.ValueSet(int64(r.Seed)),
	)
}
