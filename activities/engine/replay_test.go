package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// chunkOf returns a chunk of n steps of env, sequence seq, all acted by
// version v.
func chunkOf(env int, seq int64, n int, v int64) *Chunk {
	c := &Chunk{Env: env, Seq: seq}
	for range n {
		c.Obs = append(c.Obs, 0)
		c.Actions = append(c.Actions, 0)
		c.LogProbs = append(c.LogProbs, 0)
		c.Values = append(c.Values, 0)
		c.Rewards = append(c.Rewards, 1)
		c.Versions = append(c.Versions, v)
	}
	return c
}

func seqs(cs []*Chunk) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.Seq)
	}
	return out
}

func TestReplayCapacityDropsOldest(t *testing.T) {
	b := NewReplayBuffer(10, 0)
	b.Push(chunkOf(0, 0, 4, 0))
	b.Push(chunkOf(0, 1, 4, 0))
	b.Push(chunkOf(0, 2, 3, 0)) // 11 > 10: chunk 0 (4 steps) goes
	if n, s := b.Len(); n != 2 || s != 7 {
		t.Fatalf("holds %d chunks, %d steps; want 2 and 7", n, s)
	}
	b.Push(chunkOf(0, 3, 10, 0)) // needs the whole buffer: chunks 1 and 2 go
	if n, s := b.Len(); n != 1 || s != 10 {
		t.Fatalf("holds %d chunks, %d steps; want 1 and 10", n, s)
	}
	d := b.Drops()
	if d.CapacityChunks != 3 || d.CapacitySteps != 11 || d.StaleChunks != 0 {
		t.Fatalf("drops %+v, want 3 chunks / 11 steps for capacity", d)
	}
}

func TestReplayTakeBlocksThenReturnsFIFOWholeChunks(t *testing.T) {
	b := NewReplayBuffer(100, 0)
	b.Push(chunkOf(1, 0, 3, 0))
	type result struct {
		cs  []*Chunk
		err error
	}
	got := make(chan result, 1)
	go func() {
		cs, err := b.Take(context.Background(), 7)
		got <- result{cs, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("Take(7) returned %v with only 3 steps held", seqs(r.cs))
	case <-time.After(30 * time.Millisecond): // ample for a wrong early return
	}
	b.Push(chunkOf(2, 1, 3, 0)) // 6 steps: still short
	b.Push(chunkOf(1, 2, 5, 0)) // 11 steps: enough; chunk 2 is taken whole
	b.Push(chunkOf(3, 3, 2, 0))
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if s := seqs(r.cs); len(s) != 3 || s[0] != 0 || s[1] != 1 || s[2] != 2 {
		// The fourth push may land before the waiter wakes, but FIFO
		// order means it is never needed: 3+3+5 >= 7.
		t.Fatalf("took chunks %v, want [0 1 2]", s)
	}
	if n, s := b.Len(); n != 1 || s != 2 {
		t.Fatalf("left %d chunks, %d steps; want 1 and 2", n, s)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Take(ctx, 50); !errors.Is(err, context.Canceled) {
		t.Fatalf("Take on a cancelled context: %v", err)
	}
}

func TestReplayStalenessTagsAndDrop(t *testing.T) {
	b := NewReplayBuffer(100, 2)
	b.Push(chunkOf(0, 0, 2, 1))
	mixed := chunkOf(1, 1, 3, 3)
	mixed.Versions[0] = 2 // acted by versions 2, 3, 3
	b.Push(mixed)
	b.Push(chunkOf(2, 2, 2, 4))
	b.SetVersion(4)
	// Version 1 is 3 behind 4 > MaxStaleness 2: chunk 0 is dropped; chunk 1
	// (oldest step 2 behind) and chunk 2 stay.
	cs, err := b.Take(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if s := seqs(cs); len(s) != 2 || s[0] != 1 || s[1] != 2 {
		t.Fatalf("took %v, want [1 2]", s)
	}
	want := [][]int64{{2, 1, 1}, {0, 0}}
	for i, c := range cs {
		for j, st := range c.Staleness {
			if st != want[i][j] {
				t.Fatalf("chunk %d staleness %v, want %v", c.Seq, c.Staleness, want[i])
			}
		}
	}
	if d := b.Drops(); d.StaleChunks != 1 || d.StaleSteps != 2 {
		t.Fatalf("drops %+v, want 1 stale chunk of 2 steps", d)
	}
}

func TestReplayTakeOrDrain(t *testing.T) {
	b := NewReplayBuffer(20, 0)
	done := make(chan struct{})
	b.Push(chunkOf(0, 0, 4, 0))
	b.Push(chunkOf(0, 1, 3, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// Before done: 7 < 8 steps, so it waits until ctx ends.
	if _, err := b.TakeOrDrain(ctx, 8, done); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TakeOrDrain before done = %v, want the deadline", err)
	}
	b.Push(chunkOf(0, 2, 2, 0))
	close(done)
	// 9 >= 8: a normal take of whole chunks, oldest first (4+3+2).
	got, err := b.TakeOrDrain(context.Background(), 5, done)
	if err != nil || !equalInt64s(seqs(got), []int64{0, 1}) {
		t.Fatalf("take 5 = %v, %v; want chunks [0 1]", seqs(got), err)
	}
	// 2 < 5 after done: everything left.
	got, err = b.TakeOrDrain(context.Background(), 5, done)
	if err != nil || !equalInt64s(seqs(got), []int64{2}) {
		t.Fatalf("drain = %v, %v; want chunk [2]", seqs(got), err)
	}
	// Empty after done: nothing, at once.
	if got, err := b.TakeOrDrain(context.Background(), 5, done); err != nil || len(got) != 0 {
		t.Fatalf("drain of an empty buffer = %v, %v; want nothing", seqs(got), err)
	}
}

func equalInt64s(a, b []int64) bool {
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
