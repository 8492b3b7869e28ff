// Package jsondur is a time.Duration that JSON writes as a string with
// units ("1h30m0s", "2ms") instead of a bare count of nanoseconds, so that a
// person reading summary.json, status --json or a bench's JSON sees what the
// number means.
//
// Reading accepts both forms: a string in time.ParseDuration's syntax, and
// the integer nanoseconds that accerl wrote before (and that workflow
// histories recorded by older versions still hold), so old files and running
// experiments keep decoding.
package jsondur

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Duration is a time.Duration with a JSON encoding in units. Convert with
// time.Duration(d) or d.Std() where a time.Duration is needed.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a quoted time.Duration string, e.g. "1m30s".
// time.ParseDuration reads every such string back to the same value.
func (d Duration) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, time.Duration(d).String()), nil
}

// UnmarshalJSON reads a duration string ("90s", "1h30m") or a JSON number
// of nanoseconds (the encoding before this type; it must be an integer in
// int64's range). null leaves d unchanged, as encoding/json does for other
// types.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: want a number with a unit such as \"90s\", \"1h30m\" or \"250ms\" (%v)", s, err)
		}
		*d = Duration(v)
		return nil
	}
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*d = Duration(n)
		return nil
	}
	// Integers written with an exponent or a fraction (1e9, 2.0) by other
	// tools: accept them when they are whole and in range.
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return fmt.Errorf("duration %s: want a string with a unit such as \"90s\", or whole nanoseconds", b)
	}
	*d = Duration(int64(f))
	return nil
}

// Seconds returns d as a floating-point number of seconds.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }
