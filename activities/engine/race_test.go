//go:build race

package engine

// raceEnabled is true when the race detector is on; the learning smoke
// tests skip then, since instrumented numerics run several times slower.
const raceEnabled = true
