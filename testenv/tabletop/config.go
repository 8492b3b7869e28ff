package tabletop

import (
	"fmt"
	"slices"
	"strings"
)

// Camera names.
const (
	CameraAgentview = "agentview" // fixed, oblique, from the front of the table
	CameraWrist     = "wrist"     // on the gripper, looking down past the fingers
)

// DefaultImageSize is the camera resolution when Config.ImageSize is 0.
const DefaultImageSize = 64

// Config selects a suite, its tasks and the cameras of an Env.
type Config struct {
	// Suite is "spatial", "object", "goal" or "long".
	Suite string
	// Tasks are the task indices (0..9) Reset samples from; empty means
	// all ten, one means a single-task environment.
	Tasks []int
	// ImageSize is the side of the square camera images in pixels: a power
	// of two from 16 to 256; 0 means 64.
	ImageSize int
	// Cameras are the cameras Images renders, in order; empty means
	// agentview then wrist.
	Cameras []string
	// Render makes every Reset and Step render the images, so that their
	// cost is part of a step's; otherwise Images renders on demand.
	Render bool
	// MaxEpisodeSteps is the time limit; 0 means the suite's (spatial 220,
	// object 280, goal 300, long 520).
	MaxEpisodeSteps int
}

// Suites returns the suite names, sorted.
func Suites() []string {
	out := make([]string, len(suites))
	for i, s := range suites {
		out[i] = s.name
	}
	return out
}

// TaskCount returns the number of tasks of a suite, or 0 for an unknown
// suite.
func TaskCount(suite string) int {
	if findSuite(suite) == nil {
		return 0
	}
	return TasksPerSuite
}

// MaxSteps returns a suite's default time limit, or 0 for an unknown suite.
func MaxSteps(suite string) int {
	if s := findSuite(suite); s != nil {
		return s.maxSteps
	}
	return 0
}

// Instruction returns the language instruction of a task, or "" if suite
// or task does not exist.
func Instruction(suite string, taskIdx int) string {
	s := findSuite(suite)
	if s == nil || taskIdx < 0 || taskIdx >= TasksPerSuite {
		return ""
	}
	return s.tasks[taskIdx].instruction
}

// Cameras returns the camera names, sorted.
func Cameras() []string { return []string{CameraAgentview, CameraWrist} }

// ValidateSuite checks a suite name.
func ValidateSuite(suite string) error {
	if findSuite(suite) == nil {
		return fmt.Errorf("unknown suite %q (known: %s)", suite, strings.Join(Suites(), ", "))
	}
	return nil
}

// ValidateTask checks a task index of a (valid) suite.
func ValidateTask(suite string, taskIdx int) error {
	if taskIdx < 0 || taskIdx >= TasksPerSuite {
		return fmt.Errorf("task %d is out of range: suite %q has tasks 0..%d", taskIdx, suite, TasksPerSuite-1)
	}
	return nil
}

// ValidateImageSize checks an image size (0 means the default).
func ValidateImageSize(size int) error {
	if size == 0 {
		return nil
	}
	if size < 16 || size > 256 || size&(size-1) != 0 {
		return fmt.Errorf("image size %d is not a power of two between 16 and 256", size)
	}
	return nil
}

// ValidateCamera checks a camera name.
func ValidateCamera(name string) error {
	if !slices.Contains(Cameras(), name) {
		return fmt.Errorf("unknown camera %q (known: %s)", name, strings.Join(Cameras(), ", "))
	}
	return nil
}

// ValidateConfig reports the first problem of cfg, or nil. A spec
// validator can call it, or the Validate* helpers one field at a time.
func ValidateConfig(cfg Config) error {
	if err := ValidateSuite(cfg.Suite); err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, t := range cfg.Tasks {
		if err := ValidateTask(cfg.Suite, t); err != nil {
			return err
		}
		if seen[t] {
			return fmt.Errorf("task %d is listed twice", t)
		}
		seen[t] = true
	}
	if err := ValidateImageSize(cfg.ImageSize); err != nil {
		return err
	}
	seenCam := map[string]bool{}
	for _, c := range cfg.Cameras {
		if err := ValidateCamera(c); err != nil {
			return err
		}
		if seenCam[c] {
			return fmt.Errorf("camera %q is listed twice", c)
		}
		seenCam[c] = true
	}
	if cfg.MaxEpisodeSteps < 0 {
		return fmt.Errorf("max episode steps must not be negative, got %d", cfg.MaxEpisodeSteps)
	}
	return nil
}

// withDefaults fills the zero fields of a valid cfg.
func (cfg Config) withDefaults() Config {
	if len(cfg.Tasks) == 0 {
		cfg.Tasks = make([]int, TasksPerSuite)
		for i := range cfg.Tasks {
			cfg.Tasks[i] = i
		}
	} else {
		cfg.Tasks = slices.Clone(cfg.Tasks)
	}
	if cfg.ImageSize == 0 {
		cfg.ImageSize = DefaultImageSize
	}
	if len(cfg.Cameras) == 0 {
		cfg.Cameras = []string{CameraAgentview, CameraWrist}
	} else {
		cfg.Cameras = slices.Clone(cfg.Cameras)
	}
	if cfg.MaxEpisodeSteps == 0 {
		cfg.MaxEpisodeSteps = findSuite(cfg.Suite).maxSteps
	}
	return cfg
}
