package jsondur_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/accerl/accerl/jsondur"
)

func TestMarshalWritesUnits(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                               `"0s"`,
		2 * time.Millisecond:            `"2ms"`,
		90 * time.Second:                `"1m30s"`,
		2*time.Hour + 3*time.Nanosecond: `"2h0m0.000000003s"`,
		1500 * time.Nanosecond:          `"1.5µs"`,
		-time.Second:                    `"-1s"`,
		time.Duration(math.MaxInt64):    `"2562047h47m16.854775807s"`,
	} {
		b, err := json.Marshal(jsondur.Duration(d))
		if err != nil || string(b) != want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", d, b, err, want)
		}
	}
}

// TestRoundTrip checks that every value reads back exactly, from the string
// form and from the integer-nanosecond form older files hold.
func TestRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{0, 1, -1, 999, 1500, time.Millisecond + 7, 3*time.Hour + 59*time.Second,
		math.MaxInt64, math.MinInt64 + 1} {
		b, _ := json.Marshal(jsondur.Duration(d))
		var got jsondur.Duration
		if err := json.Unmarshal(b, &got); err != nil || got.Std() != d {
			t.Errorf("string form %s read back as %v, %v; want %v", b, got, err, d)
		}
		legacy, _ := json.Marshal(int64(d))
		got = 0
		if err := json.Unmarshal(legacy, &got); err != nil || got.Std() != d {
			t.Errorf("nanosecond form %s read back as %v, %v; want %v", legacy, got, err, d)
		}
	}
}

func TestUnmarshalInStruct(t *testing.T) {
	var v struct {
		A, B, C jsondur.Duration
	}
	if err := json.Unmarshal([]byte(`{"A":"1h30m","B":2000000,"C":1e9}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.A.Std() != 90*time.Minute || v.B.Std() != 2*time.Millisecond || v.C.Std() != time.Second {
		t.Errorf("got %v %v %v", v.A, v.B, v.C)
	}
}

func TestUnmarshalRefusesWithReason(t *testing.T) {
	for in, want := range map[string]string{
		`"5 minutes"`: `duration "5 minutes": want a number with a unit`,
		`"10"`:        `missing unit`,
		`1.5`:         `whole nanoseconds`,
		`1e30`:        `whole nanoseconds`,
		`true`:        `whole nanoseconds`,
	} {
		var d jsondur.Duration
		err := json.Unmarshal([]byte(in), &d)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s) error = %v; want it to contain %q", in, err, want)
		}
	}
}
