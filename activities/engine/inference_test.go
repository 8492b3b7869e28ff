package engine

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/accerl/accerl/kernels"
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
	r := newRequest(1, categoricalShape)
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
		if err != nil || r.Tokens[0] != i || r.EnvAction[0] != float64(i) || r.LogProbs[0] != -float64(i) {
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
	if rep, err := b.Wait(ctx); err != nil || b.Tokens[0] != 2 || rep.Wait != 7*time.Millisecond {
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
				r := newRequest(1, categoricalShape)
				r.RNG = rand.New(rand.NewPCG(uint64(g), 9))
				for i := range each {
					id := g*1000 + i
					r.Obs[0] = float64(id)
					if _, err := s.Infer(ctx, r); err != nil {
						t.Error(err)
						return
					}
					if r.Tokens[0] != id {
						t.Errorf("requester %d got action %d, want %d", g, r.Tokens[0], id)
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

func TestServiceRunsMultiTokenPolicy(t *testing.T) {
	// A tokens head with two action dimensions: each reply must carry its
	// own row of the batched ActActions call (2 tokens, 2 log-probs) and
	// the bin centres as the environment action.
	pc := kernels.PolicyConfig{ObsDim: 2, Head: kernels.HeadTokens, ActionDims: 2, Low: []float64{-1, 0}, High: []float64{1, 4},
		Bins: 8, EmbedDim: 3, Hidden: []int{5}, Activation: kernels.ActTanh}
	pol := kernels.NewPolicy(pc, rand.New(rand.NewPCG(3, 3)))
	ref := pol.Clone()
	shape := ShapeOf(pol)
	if shape != (ActionShape{Tokens: 2, LogProbs: 2, Env: 2}) {
		t.Fatalf("tokens shape %+v", shape)
	}
	s := NewInferenceService(InferenceConfig{ObsDim: 2, Action: shape, MaxBatch: 3, MaxWait: time.Hour, Clock: newFakeClock()},
		pol, rand.New(rand.NewPCG(9, 9)))
	s.Publish(0, pol.Params())
	ctx := context.Background()
	obs := []float64{0.1, -0.2, 0.5, 0.3, -0.7, 0.9}
	var reqs []*Request
	for i := range 3 {
		r := s.NewRequest()
		copy(r.Obs, obs[2*i:2*i+2])
		if err := s.Submit(ctx, r); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	startService(t, s)
	var values []float64
	for _, r := range reqs {
		rep, err := r.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, rep.Value)
	}
	// The same batch through the reference clone with the same RNG.
	tok, logp, val := make([]int, 6), make([]float64, 6), make([]float64, 3)
	ref.ActActions(obs, 3, rand.New(rand.NewPCG(9, 9)), kernels.Actions{Tokens: tok}, logp, val)
	for i, r := range reqs {
		for k := range 2 {
			low, high := pc.Low[k], pc.High[k]
			centre := kernels.BinCenter(tok[2*i+k], 8, low, high)
			if r.Tokens[k] != tok[2*i+k] || r.LogProbs[k] != logp[2*i+k] || r.EnvAction[k] != centre {
				t.Fatalf("request %d dim %d: token %d logp %v env %v; want %d, %v, %v",
					i, k, r.Tokens[k], r.LogProbs[k], r.EnvAction[k], tok[2*i+k], logp[2*i+k], centre)
			}
		}
		if values[i] != val[i] {
			t.Fatalf("request %d: value %v, want %v", i, values[i], val[i])
		}
	}
}
