package kernels

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// TestCUDAAbsentIsClean checks the no-GPU path: the probe neither panics
// nor errors, gives a reason, and NewCUDA then fails with that reason.
// On a machine with a GPU it checks that the backend starts and closes.
func TestCUDAAbsentIsClean(t *testing.T) {
	ok, reason := CUDAAvailable()
	if reason == "" {
		t.Fatal("CUDAAvailable gave no reason")
	}
	t.Logf("CUDAAvailable = %v: %s", ok, reason)
	c, err := NewCUDA()
	if !ok {
		if err == nil || c != nil {
			t.Fatalf("NewCUDA without a GPU = %v, %v; want an error", c, err)
		}
		if ok2, reason2 := CUDAAvailable(); ok2 || reason2 != reason {
			t.Fatalf("second probe = %v %q, want the first's %q", ok2, reason2, reason)
		}
		return
	}
	if err != nil {
		t.Fatalf("CUDAAvailable is true but NewCUDA failed: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestCUDALibDirsHonoursEnv checks that ACCERL_CUDA_LIB_DIR comes first.
func TestCUDALibDirsHonoursEnv(t *testing.T) {
	if !cudaLoaderBuilt {
		t.Skip("no CUDA loader on this platform")
	}
	t.Setenv("ACCERL_CUDA_LIB_DIR", "/nonexistent/a"+string(os.PathListSeparator)+"/nonexistent/b")
	dirs := cudaLibDirs()
	if len(dirs) < 2 || dirs[0] != "/nonexistent/a" || dirs[1] != "/nonexistent/b" {
		t.Fatalf("cudaLibDirs() = %v", dirs)
	}
}

// newTestCUDA returns the CUDA backend, or skips the test without a GPU.
func newTestCUDA(t *testing.T) *CUDA {
	t.Helper()
	if ok, reason := CUDAAvailable(); !ok {
		t.Skip("no GPU: " + reason)
	}
	c, err := NewCUDA()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Log(c.Name())
	return c
}

// TestCUDAParity runs every operation on the GPU against the reference, with
// the CPU backend's tolerances (cuBLAS's sgemm accumulates in float32, as
// the CPU micro-kernel does; TF32 is off by default).
func TestCUDAParity(t *testing.T) {
	c := newTestCUDA(t)
	testGemmParity(t, c)
	testBackendOps(t, c)
	rng := rand.New(rand.NewPCG(31, 32))
	gemmCase(t, c, rng, false, true, 300, 1100, 270, 1, 0.5)
	for _, tt := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		m, n, k, batch := 37, 41, 33, 5
		sa, sb, sc := m*k+3, k*n, m*n+1
		a, b := backendRand(rng, sa*batch), backendRand(rng, sb*batch)
		c0 := backendRand(rng, sc*batch)
		want := append([]float32(nil), c0...)
		NewReference().GemmStrided(tt[0], tt[1], m, n, k, 0.5, a, sa, b, sb, 1, want, sc, batch)
		full, got := withGuard(c0)
		c.GemmStrided(tt[0], tt[1], m, n, k, 0.5, a, sa, b, sb, 1, got, sc, batch)
		checkGuard(t, "CUDA GemmStrided", full, len(got))
		expectClose(t, "CUDA GemmStrided", got, want, gemmBound(k, 0.5, 1, float64(k), 1))
	}
}

// TestCUDATimeGemm checks the device-resident timing used by kbench.
func TestCUDATimeGemm(t *testing.T) {
	c := newTestCUDA(t)
	sec, err := c.TimeGemm(false, false, 512, 512, 512, 50*time.Millisecond)
	if err != nil || !(sec > 0) {
		t.Fatalf("TimeGemm = %v, %v", sec, err)
	}
	t.Logf("cublasSgemm 512³: %.1f GFLOP/s", 2*512*512*512/sec/1e9)
}
