package telemetry

import "github.com/accerl/accerl/runstore"

// summarizeModels turns a list of GPU model names into one line in the format of the
// hardware line in run manifests: ["B", "A", "A"] -> "2 x A, B".
func summarizeModels(models []string) string { return runstore.SummarizeGPUModels(models) }
