package specs

import (
	"reflect"
	"slices"
	"testing"

	"github.com/accerl/accerl/jsondur"
)

// TestDurationKeysAreOnlyDurations guards nanosecondDurations: the hash
// rewrites every member whose key is a duration field's JSON name, so no
// field of another type may use such a name anywhere in Arm.
func TestDurationKeysAreOnlyDurations(t *testing.T) {
	want := []string{"heartbeat_timeout", "max_wait", "median", "wall_time"}
	if !slices.Equal(durationKeys, want) {
		t.Errorf("duration keys = %v, want %v (update this test when adding one)", durationKeys, want)
	}
	others := map[string]bool{}
	visitFields(reflect.TypeFor[Arm](), func(f reflect.StructField) {
		if f.Type != reflect.TypeFor[jsondur.Duration]() {
			others[jsonName(f)] = true
		}
	})
	for _, k := range durationKeys {
		if others[k] {
			t.Errorf("%q names a duration and a field of another type; the hash would rewrite both", k)
		}
	}
}

func TestNanosecondDurations(t *testing.T) {
	// Hand-written: 30m is 1.8e12 ns, 1.5µs is 1500 ns; a string value
	// that merely contains a duration key (escaped quotes) stays as it is.
	in := `{"name":"x \"max_wait\":\"1s\"","budget":{"env_steps":5,"wall_time":"30m0s"},"inference":[{"max_wait":"1.5µs"}]}`
	want := `{"name":"x \"max_wait\":\"1s\"","budget":{"env_steps":5,"wall_time":1800000000000},"inference":[{"max_wait":1500}]}`
	if got := string(nanosecondDurations([]byte(in))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
