package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/accerl/accerl/runstate"
	"github.com/accerl/accerl/workflows"
)

// The progress line fits 80 columns with every field but the elapsed time, shows the rate of the last 30 s (not
// the average) and the ETA at that rate, and keeps the status when the terminal is narrow.
func TestProgressLineWidthRateETA(t *testing.T) {
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v := &progressView{w: &bytes.Buffer{}, width: func() int { return 80 }, now: func() time.Time { return clock }, rates: map[string][]rateSample{}}
	p := workflows.RunProgress{ID: "lr-3e-4/seed-12", Status: workflows.StatusRunning, BudgetSteps: 1_000_000,
		Counters: runstate.Counters{EnvSteps: 100_000, WallS: 100, Episodes: 40, RecentReturn: 123.456}}
	// 1,000 steps/s on average so far; then 60 s at 250 steps/s.
	for i := range 7 {
		p.EnvSteps = 100_000 + int64(i)*2500
		p.WallS = 100 + float64(i)*10
		clock = clock.Add(10 * time.Second)
		v.currentRate(p)
	}
	rate := v.currentRate(p)
	if rate != 250 {
		t.Fatalf("current rate %v, want 250 (the last 30 s, not the average since the start)", rate)
	}
	line := progressLine(p, rate, 80)
	// Remaining 885,000 steps at 250/s: 3540 s = 59m00s.
	for _, want := range []string{"lr-3e-4/seed-12", "12%", "115k/1M", "250/s", "ETA 59m00s", "ret 123.5", "running"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	if n := utf8.RuneCountInString(line); n > 80 {
		t.Errorf("line has %d columns, want ≤ 80: %q", n, line)
	}
	if wide := progressLine(p, rate, 100); !strings.Contains(wide, "T 2m40s") {
		t.Errorf("100-column line %q lacks the elapsed time T 2m40s (cut first at 80)", wide)
	}
	narrow := progressLine(p, rate, 50)
	if n := utf8.RuneCountInString(narrow); n > 50 || !strings.HasSuffix(narrow, "running") {
		t.Errorf("50-column line %q (%d columns): want ≤ 50 ending in the status", narrow, n)
	}
	p.LastError = "TrainSegment retrying (attempt 3): no space left on device — the disk is full"
	two := strings.Split(progressLine(p, rate, 80), "\n")
	if len(two) != 2 || !strings.HasSuffix(two[0], "running") || !strings.Contains(two[1], "no space left on device") {
		t.Errorf("with an error: %q, want the progress line then the error on its own line", two)
	}
	p.LastError = ""
	p.ID = "a-very-long-arm-name-indeed/seed-3"
	if l := progressLine(p, rate, 80); !strings.HasPrefix(l, "…") || !strings.Contains(l, "seed-3") {
		t.Errorf("long id: %q, want it cut from the left with the seed kept", l)
	}
}

func TestShortFormats(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {9999, "9999"}, {12_345, "12.3k"}, {123_456, "123k"}, {1_234_567, "1.23M"}} {
		if got := shortInt(c.n); got != c.want {
			t.Errorf("shortInt(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		s    float64
		want string
	}{{45, "45s"}, {725, "12m05s"}, {11220, "3h07m"}} {
		if got := shortDuration(c.s); got != c.want {
			t.Errorf("shortDuration(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// TestProgressRateSlowUpdates: with updates of 4,096 steps every 45 s (longer than the
// rate window) polled every 2 s, the rate is never 0 while the run progresses, and it is
// 4,096 steps over the time between the first readings of the last two counts; after the
// run stops moving it decays.
func TestProgressRateSlowUpdates(t *testing.T) {
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v := &progressView{w: &bytes.Buffer{}, width: func() int { return 80 }, now: func() time.Time { return clock }, rates: map[string][]rateSample{}}
	p := workflows.RunProgress{ID: "base/seed-1", Status: workflows.StatusRunning, BudgetSteps: 131_072}
	var rate float64
	for s := 0; s <= 450; s += 2 {
		p.EnvSteps = int64(s/45) * 4096
		rate = v.currentRate(p)
		if s >= 46 && rate == 0 {
			t.Fatalf("rate 0 at %d s, %d steps: the run is progressing", s, p.EnvSteps)
		}
		clock = clock.Add(2 * time.Second)
	}
	// At 450 s the counter reads 10 updates for the first time; it first read 9 at 406 s
	// (the first even second past 405), so the span is 44 s for one update.
	if want := 4096.0 / 44; math.Abs(rate-want) > 1e-9 {
		t.Errorf("rate at 450 s %v, want %v", rate, want)
	}
	for range 100 { // 200 s without a move
		clock = clock.Add(2 * time.Second)
		rate = v.currentRate(p)
	}
	if rate >= 4096.0/200 {
		t.Errorf("rate %v after 200 s without progress, want under %v", rate, 4096.0/200)
	}
}
