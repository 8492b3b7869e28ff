package engine

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// startService runs s until the test ends and returns a channel that
// receives every batch record.
func startService(t *testing.T, s *InferenceService) <-chan BatchRecord {
	t.Helper()
	recs := make(chan BatchRecord, 1024)
	s.OnBatch(func(r BatchRecord) { recs <- r })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return recs
}

func req(id float64) *Request {
	r := NewRequest(1)
	r.Obs[0] = id
	return r
}

func nextBatch(t *testing.T, recs <-chan BatchRecord) BatchRecord {
	t.Helper()
	select {
	case r := <-recs:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no batch within 5s")
		return BatchRecord{}
	}
}

func noBatch(t *testing.T, recs <-chan BatchRecord) {
	t.Helper()
	// 30ms of real time is ample for the service goroutine to react to a
	// fake-clock change; a batch arriving here is a real rule violation.
	select {
	case r := <-recs:
		t.Fatalf("unexpected batch of %d at %v", r.Size, r.Start)
	case <-time.After(30 * time.Millisecond):
	}
}

func TestBatchFiresAtMaxBatch(t *testing.T) {
	clock := newFakeClock()
	s := NewInferenceService(InferenceConfig{ObsDim: 1, MaxBatch: 4, MaxWait: 5 * time.Millisecond, Clock: clock},
		&echoPolicy{}, rand.New(rand.NewPCG(1, 2)))
	recs := startService(t, s)
	ctx := context.Background()
	reqs := []*Request{req(0), req(1), req(2), req(3), req(4)}
	for _, r := range reqs[:3] {
		if err := s.Submit(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	noBatch(t, recs) // three queued, clock frozen: nothing may fire
	if err := s.Submit(ctx, reqs[3]); err != nil {
		t.Fatal(err)
	}
	b := nextBatch(t, recs)
	if b.Size != 4 {
		t.Fatalf("batch size %d, want 4 (MaxBatch)", b.Size)
	}
	for i, w := range b.Waits {
		if w != 0 {
			t.Errorf("wait[%d] = %v, want 0 (clock never moved)", i, w)
		}
	}
	for i, r := range reqs[:4] {
		rep, err := r.Wait(ctx)
		if err != nil || rep.Action != i {
			t.Fatalf("request %d: reply %+v, %v", i, rep, err)
		}
	}
	// A fifth request alone waits for MaxWait.
	if err := s.Submit(ctx, reqs[4]); err != nil {
		t.Fatal(err)
	}
	clock.waitTimers(1)
	clock.Advance(5 * time.Millisecond)
	if b := nextBatch(t, recs); b.Size != 1 || b.Waits[0] != 5*time.Millisecond {
		t.Fatalf("tail batch %+v, want one request that waited 5ms", b)
	}
}

func TestBatchFiresWhenOldestTurnsMaxWait(t *testing.T) {
	clock := newFakeClock()
	s := NewInferenceService(InferenceConfig{ObsDim: 1, MaxBatch: 8, MaxWait: 5 * time.Millisecond, Clock: clock},
		&echoPolicy{}, rand.New(rand.NewPCG(1, 2)))
	recs := startService(t, s)
	ctx := context.Background()
	a, b := req(1), req(2)
	t0 := clock.Now()
	if err := s.Submit(ctx, a); err != nil {
		t.Fatal(err)
	}
	clock.waitTimers(1)
	clock.Advance(3 * time.Millisecond)
	if err := s.Submit(ctx, b); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2*time.Millisecond - time.Nanosecond) // A has waited 5ms-1ns
	noBatch(t, recs)
	clock.Advance(time.Nanosecond) // A turns 5ms old; B is only 2ms old
	got := nextBatch(t, recs)
	if got.Size != 2 || got.Waiting != 2 {
		t.Fatalf("batch size %d waiting %d, want 2 and 2", got.Size, got.Waiting)
	}
	if !got.Start.Equal(t0.Add(5 * time.Millisecond)) {
		t.Errorf("batch started at +%v, want +5ms", got.Start.Sub(t0))
	}
	if got.Waits[0] != 5*time.Millisecond || got.Waits[1] != 2*time.Millisecond {
		t.Errorf("waits %v, want [5ms 2ms]", got.Waits)
	}
}

func TestWaitBoundedByMaxWaitPlusCompute(t *testing.T) {
	// A arrives at 0 and fires alone at 5ms; its batch computes for 8ms
	// (1ms, then B arrives at 6ms, then 7ms more). B's deadline (11ms)
	// passes during the compute, so B must run right after it, at 13ms:
	// wait 7ms = MaxWait + 2ms <= MaxWait + one batch of compute (8ms).
	clock := newFakeClock()
	maxWait := 5 * time.Millisecond
	pol := &echoPolicy{}
	s := NewInferenceService(InferenceConfig{ObsDim: 1, MaxBatch: 8, MaxWait: maxWait, Clock: clock},
		pol, rand.New(rand.NewPCG(1, 2)))
	ctx := context.Background()
	b := req(2)
	var once sync.Once
	pol.during = func() {
		once.Do(func() {
			clock.Advance(time.Millisecond)
			if err := s.Submit(ctx, b); err != nil {
				t.Error(err)
			}
			clock.Advance(7 * time.Millisecond)
		})
	}
	recs := startService(t, s)
	t0 := clock.Now()
	if err := s.Submit(ctx, req(1)); err != nil {
		t.Fatal(err)
	}
	clock.waitTimers(1)
	clock.Advance(maxWait)
	first := nextBatch(t, recs)
	if first.Size != 1 || first.Compute != 8*time.Millisecond {
		t.Fatalf("first batch %+v, want size 1 and 8ms compute", first)
	}
	second := nextBatch(t, recs)
	if second.Size != 1 || second.Waits[0] != 7*time.Millisecond || !second.Start.Equal(t0.Add(13*time.Millisecond)) {
		t.Fatalf("second batch start +%v waits %v, want +13ms and [7ms]", second.Start.Sub(t0), second.Waits)
	}
	if second.Waits[0] > maxWait+first.Compute {
		t.Errorf("wait %v exceeds MaxWait + compute %v", second.Waits[0], maxWait+first.Compute)
	}
	if rep, err := b.Wait(ctx); err != nil || rep.Action != 2 || rep.Wait != 7*time.Millisecond {
		t.Fatalf("B reply %+v, %v", rep, err)
	}
}

// TestEveryRequestAnsweredOnce hammers the service with concurrent
// requesters on the real clock (meant for -race): each requester must get
// exactly its own answer, and the batches must add up to the requests.
func TestEveryRequestAnsweredOnce(t *testing.T) {
	for _, perRequest := range []bool{false, true} {
		const requesters, each = 48, 150
		s := NewInferenceService(InferenceConfig{ObsDim: 1, MaxBatch: 16, MaxWait: 200 * time.Microsecond, PerRequestRNG: perRequest},
			&echoPolicy{}, rand.New(rand.NewPCG(1, 2)))
		var mu sync.Mutex
		sizes := 0
		batches := 0
		s.OnBatch(func(r BatchRecord) {
			mu.Lock()
			sizes += r.Size
			batches++
			mu.Unlock()
			if r.Size > 16 || r.Size < 1 {
				t.Errorf("batch size %d outside [1,16]", r.Size)
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = s.Run(ctx); close(done) }()
		var wg sync.WaitGroup
		for g := range requesters {
			wg.Go(func() {
				r := NewRequest(1)
				r.RNG = rand.New(rand.NewPCG(uint64(g), 9))
				for i := range each {
					id := g*1000 + i
					r.Obs[0] = float64(id)
					rep, err := s.Infer(ctx, r)
					if err != nil {
						t.Error(err)
						return
					}
					if rep.Action != id {
						t.Errorf("requester %d got action %d, want %d", g, rep.Action, id)
						return
					}
					select {
					case extra := <-r.reply:
						t.Errorf("requester %d answered twice: %+v", g, extra)
						return
					default:
					}
				}
			})
		}
		wg.Wait()
		cancel()
		<-done
		st := s.SegmentStats()
		if sizes != requesters*each || st.Requests != requesters*each {
			t.Fatalf("perRequest=%v: batches answered %d (stats %d), want %d", perRequest, sizes, st.Requests, requesters*each)
		}
		total := 0
		for k, c := range st.SizeHist {
			total += k * c
		}
		if total != requesters*each || int64(batches) != st.Batches {
			t.Fatalf("size histogram covers %d requests in %d batches, want %d in %d", total, st.Batches, requesters*each, batches)
		}
	}
}

func TestPublishedWeightsAndLag(t *testing.T) {
	for _, lag := range []int{0, 2} {
		clock := newFakeClock()
		pol := &echoPolicy{}
		s := NewInferenceService(InferenceConfig{ObsDim: 1, MaxBatch: 1, MaxWait: time.Millisecond, Lag: lag, Clock: clock},
			pol, rand.New(rand.NewPCG(1, 2)))
		startService(t, s)
		ctx := context.Background()
		for v := int64(0); v <= 5; v++ {
			// Version v's weights are recognisable by their first entry.
			s.Publish(v, []float64{100 + float64(v)})
			rep, err := s.Infer(ctx, req(0))
			if err != nil {
				t.Fatal(err)
			}
			want := max(0, v-int64(lag))
			if rep.Version != want || rep.Value != 100+float64(want) {
				t.Errorf("lag %d after publishing %d: acted with version %d value %v, want version %d value %v",
					lag, v, rep.Version, rep.Value, want, 100+float64(want))
			}
		}
		if h := s.published(); len(h) != lag+1 {
			t.Errorf("lag %d: service retains %d versions, want %d", lag, len(h), lag+1)
		}
	}
}
