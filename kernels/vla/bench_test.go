package vla

import (
	"math/rand/v2"
	"os"
	"testing"
)

func TestBenchTiny(t *testing.T) {
	c := tinyConfig(true)
	r, err := bench(c, []int{1, 4}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.TrainBytesSlim >= r.TrainBytesFull || len(r.Act) != 2 || r.TrainSlim <= 0 || r.TrainFull <= 0 {
		t.Fatalf("implausible result:\n%v", r)
	}
	if want := 3 * 4 * (c.VocabSize - c.Bins) * c.Dim; r.TrainBytesFull-r.TrainBytesSlim != want {
		t.Errorf("full − slim training bytes = %d, want 3 × 4 B × (V−Bins)·Dim = %d", r.TrainBytesFull-r.TrainBytesSlim, want)
	}
	if _, err := Bench(Config{}, nil); err == nil {
		t.Error("Bench accepted an empty config")
	}
}

// TestBenchDefault prints the benchmark at the default size and at the
// small preset; it takes about half a minute, so it runs only with
// ACCERL_VLA_BENCH=1.
func TestBenchDefault(t *testing.T) {
	if os.Getenv("ACCERL_VLA_BENCH") == "" {
		t.Skip("set ACCERL_VLA_BENCH=1 to run the default-size benchmark")
	}
	for _, c := range []Config{DefaultConfig(), SmallConfig()} {
		r, err := Bench(c, []int{1, 16, 64})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%v", r)
	}
}

var sinkTokens [][]int

func benchAct(b *testing.B, slim bool, batch int) {
	c := DefaultConfig()
	c.SlimHead = slim
	rng := rand.New(rand.NewPCG(3, 4))
	m := New(c, rng)
	obs := benchObs(c, batch, rng)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sinkTokens, _, _ = m.Act(obs, rng, false)
	}
}

func BenchmarkActSlim1(b *testing.B)  { benchAct(b, true, 1) }
func BenchmarkActFull1(b *testing.B)  { benchAct(b, false, 1) }
func BenchmarkActSlim16(b *testing.B) { benchAct(b, true, 16) }
func BenchmarkActFull16(b *testing.B) { benchAct(b, false, 16) }
