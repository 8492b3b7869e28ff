package pixelwm

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSaveLoadRoundTrip stores random and noisy-expert episodes with
// lingering frames and reads them back equal, labels included; a changed
// file is refused.
func TestSaveLoadRoundTrip(t *testing.T) {
	for _, beh := range []string{BehaviourExpertNoisy, BehaviourRandom} {
		in := CollectInput{Suite: "spatial", Episodes: 12, Behaviour: beh, Noise: 0.3, ImageSize: 16, Linger: 3, Seed: 5, MaxSteps: 80}
		eps, err := Collect(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := Save(dir, in, eps); err != nil {
			t.Fatal(err)
		}
		got, back, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(eps)
		slices.SortStableFunc(want, func(a, b Episode) int { return a.Task - b.Task })
		if !reflect.DeepEqual(got, in) || len(back) != len(want) {
			t.Fatalf("%s: loaded %d episodes of %+v, want %d of %+v", beh, len(back), got, len(want), in)
		}
		for i := range want {
			if !reflect.DeepEqual(back[i], want[i]) {
				t.Errorf("%s: episode %d (task %d, %d frames, succeeded %v) differs after the round trip", beh, i, want[i].Task, want[i].Len(), want[i].Succeeded)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "task-03.arrow"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "changed since it was written") {
			t.Errorf("%s: a changed file loaded: %v", beh, err)
		}
	}
}

// TestSplitCoversEveryTask checks that with round-robin tasks both parts
// hold episodes of every task, one in heldEvery held out.
func TestSplitCoversEveryTask(t *testing.T) {
	var eps []Episode
	for e := range 100 {
		eps = append(eps, Episode{Task: e % 10})
	}
	train, held := Split(eps, 5)
	if len(held) != 20 || len(train) != 80 {
		t.Fatalf("held %d, train %d; want 20 and 80", len(held), len(train))
	}
	count := func(part []Episode) map[int]int {
		m := map[int]int{}
		for _, e := range part {
			m[e.Task]++
		}
		return m
	}
	for task, n := range count(held) {
		if n != 2 || count(train)[task] != 8 {
			t.Errorf("task %d: %d held out, %d to train on; want 2 and 8", task, n, count(train)[task])
		}
	}
	if len(count(held)) != 10 {
		t.Errorf("held-out episodes cover %d tasks, want 10", len(count(held)))
	}
}
