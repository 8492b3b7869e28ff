package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/accerl/accerl/testenv"
)

// roundTrip sends snap through JSON, as a checkpoint does.
func roundTrip(t *testing.T, snap *Snapshot) *Snapshot {
	t.Helper()
	raw, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

func snapshot(t *testing.T, e *Engine) *Snapshot {
	t.Helper()
	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return roundTrip(t, snap)
}

func TestRoundQuota(t *testing.T) {
	cfg := smallConfig(ModeSync) // 4 envs × 16 steps per round
	cfg.MaxEnvSteps = 165
	e := mustNew(t, cfg, nil)
	q := make([]int, 4)
	for _, tc := range []struct {
		done  int64
		total int
		quota []int
	}{
		{0, 64, []int{16, 16, 16, 16}},
		{101, 64, []int{16, 16, 16, 16}}, // 64 left: still a full round
		{128, 37, []int{10, 9, 9, 9}},    // 37 = 4·9 + 1: env 0 takes the extra step
		{162, 3, []int{1, 1, 1, 0}},
		{165, 0, []int{0, 0, 0, 0}},
	} {
		e.envSteps.Store(tc.done)
		if got := e.roundQuota(q); got != tc.total || !equalInts(q, tc.quota) {
			t.Errorf("after %d of 165 steps: quota %v (sum %d), want %v (sum %d)", tc.done, q, got, tc.quota, tc.total)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// budgetRun runs e for up to `updates` updates and returns the segment
// statistics and the batch sizes of its updates.
func budgetRun(t *testing.T, e *Engine, updates int) (SegmentStats, []int) {
	t.Helper()
	var batches []int
	st := mustRun(t, e, updates, func(u UpdateReport) { batches = append(batches, u.BatchSteps) })
	return st, batches
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestSyncBudgetExactAndResumable(t *testing.T) {
	cfg := smallConfig(ModeSync)
	cfg.MaxEnvSteps = 165 // two full 64-step rounds and a 37-step one

	a := mustNew(t, cfg, nil)
	st, batches := budgetRun(t, a, 100)
	if !st.BudgetReached || st.EnvSteps != 165 || st.Updates != 3 || !equalInts(batches, []int{64, 64, 37}) {
		t.Fatalf("budget 165: reached %v, %d steps, %d updates, batches %v; want true, 165, 3, [64 64 37]",
			st.BudgetReached, st.EnvSteps, st.Updates, batches)
	}
	// A spent budget makes further runs no-ops.
	st2, batches2 := budgetRun(t, a, 5)
	if !st2.BudgetReached || st2.EnvSteps != 165 || st2.SegmentUpdates != 0 || len(batches2) != 0 {
		t.Fatalf("run after the budget: %+v", st2)
	}

	// Interrupted after one update, restored from a snapshot: the same
	// rounds, the same parameters.
	b := mustNew(t, cfg, nil)
	if st, _ := budgetRun(t, b, 1); st.BudgetReached || st.EnvSteps != 64 {
		t.Fatalf("first segment: reached %v after %d steps, want false after 64", st.BudgetReached, st.EnvSteps)
	}
	c := mustNew(t, cfg, snapshot(t, b))
	stC, batchesC := budgetRun(t, c, 100)
	if !stC.BudgetReached || stC.EnvSteps != 165 || stC.Updates != 3 || !equalInts(batchesC, []int{64, 37}) {
		t.Fatalf("resumed: reached %v, %d steps, %d updates, batches %v; want true, 165, 3, [64 37]",
			stC.BudgetReached, stC.EnvSteps, stC.Updates, batchesC)
	}
	if c.ParamsSHA256() != a.ParamsSHA256() {
		t.Fatal("resumed budgeted run differs from the uninterrupted one")
	}

	// A last round smaller than the minibatch count still trains: 65 =
	// one round and one step, with 2 minibatches configured.
	cfg.MaxEnvSteps = 65
	d := mustNew(t, cfg, nil)
	if st, batches := budgetRun(t, d, 100); !st.BudgetReached || st.EnvSteps != 65 || !equalInts(batches, []int{64, 1}) {
		t.Fatalf("budget 65: reached %v, %d steps, batches %v; want true, 65, [64 1]", st.BudgetReached, st.EnvSteps, batches)
	}

	// A snapshot past a smaller budget is refused.
	cfg.MaxEnvSteps = 100
	if _, err := New(cfg, snapshot(t, a), testEnvs(cfg, testenv.Latency{})); err == nil {
		t.Fatal("a snapshot with 165 steps was accepted under a budget of 100")
	}
}

func TestAsyncBudgetExactAndResumable(t *testing.T) {
	cfg := smallConfig(ModeAsync)
	lat := constLatency(100 * time.Microsecond)
	cfg.MaxEnvSteps = 301 // not a multiple of the chunk (8), batch (64) or env count (4)

	e := mustNewLat(t, cfg, nil, lat)
	st, batches := budgetRun(t, e, 1000)
	// Every collected step is trained on or dropped; with nothing left,
	// trained + dropped is exactly the budget.
	if !st.BudgetReached || st.EnvSteps != 301 || int64(sum(batches))+st.Dropped != 301 {
		t.Fatalf("reached %v, %d steps, %d trained in %v, %d dropped; want 301 collected = trained + dropped",
			st.BudgetReached, st.EnvSteps, sum(batches), batches, st.Dropped)
	}
	for i, n := range batches[:len(batches)-1] {
		if n < 64 {
			t.Fatalf("batch %d of %v has %d steps; only the last may be short", i, batches, n)
		}
	}
	if _, held := e.replay.Len(); held != 0 {
		t.Fatalf("%d steps left in replay", held)
	}
	if st2, b2 := budgetRun(t, e, 3); !st2.BudgetReached || st2.SegmentEnvSteps != 0 || len(b2) != 0 {
		t.Fatalf("run after the budget: %+v", st2)
	}

	// Stopped after 2 updates, snapshotted (with partial chunks and
	// replay contents), resumed: the budget still holds exactly.
	f := mustNewLat(t, cfg, nil, lat)
	st1, b1 := budgetRun(t, f, 2)
	if st1.BudgetReached || st1.EnvSteps > 301 {
		t.Fatalf("first segment: reached %v with %d steps", st1.BudgetReached, st1.EnvSteps)
	}
	g := mustNew(t, cfg, snapshot(t, f))
	st2, b2 := budgetRun(t, g, 1000)
	if !st2.BudgetReached || st2.EnvSteps != 301 || int64(sum(b1)+sum(b2))+st2.Dropped+st1.Dropped != 301 {
		t.Fatalf("resumed: reached %v, %d steps, trained %d+%d, dropped %d+%d; want 301 = trained + dropped",
			st2.BudgetReached, st2.EnvSteps, sum(b1), sum(b2), st1.Dropped, st2.Dropped)
	}
}

func TestAsyncBudgetBelowOneBatch(t *testing.T) {
	// 10 steps never make a 64-step batch: the run drains them in one
	// short update instead of waiting forever.
	cfg := smallConfig(ModeAsync)
	cfg.MaxEnvSteps = 10
	e := mustNew(t, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var batches []int
	st, err := e.Run(ctx, 5, func(u UpdateReport) { batches = append(batches, u.BatchSteps) })
	if err != nil {
		t.Fatal(err)
	}
	if !st.BudgetReached || st.EnvSteps != 10 || !equalInts(batches, []int{10}) {
		t.Fatalf("reached %v, %d steps, batches %v; want true, 10, [10]", st.BudgetReached, st.EnvSteps, batches)
	}
}
