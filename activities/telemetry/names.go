package telemetry

import (
	"fmt"
	"slices"
	"strings"
)

// summarizeModels turns a list of GPU model names into one line, grouping
// equal models: ["B", "A", "A"] -> "2 x A, B". It matches the format of
// the hardware line in run manifests (reports.NewHardware).
func summarizeModels(models []string) string {
	models = slices.Sorted(slices.Values(models))
	var parts []string
	for i := 0; i < len(models); {
		j := i
		for j < len(models) && models[j] == models[i] {
			j++
		}
		if n := j - i; n > 1 {
			parts = append(parts, fmt.Sprintf("%d x %s", n, models[i]))
		} else {
			parts = append(parts, models[i])
		}
		i = j
	}
	return strings.Join(parts, ", ")
}
