package kernels

import (
	"runtime"
	"sync"
)

// The float32 GEMM follows the BLIS design (Van Zee & van de Geijn 2015,
// "BLIS: A Framework for Rapidly Instantiating BLAS Functionality", §3; Goto
// & van de Geijn 2008, "Anatomy of High-Performance Matrix Multiplication"):
// C is updated in nc-wide column blocks; for each kc-deep slice of the inner
// dimension a kc×nc block of op(B) is packed into 16-column micro-panels
// (sized for the L3 cache), then for each mc-tall row block an mc×kc block
// of op(A) (sized for L2) is packed into 6-row micro-panels — or, when A is
// stored row-major (no transA), read in place six rows at a time, which
// saves the packing that dominates small and thin products — and a 6×16
// register-blocked micro-kernel multiplies one A micro-panel with one B
// micro-panel (which stays in L1) and adds alpha times the product into C.
// Edge tiles run the same kernel into a scratch tile. beta is applied to C
// once, before the first slice, so the kernel only ever adds.
const (
	gemmMR = 6    // rows of the micro-kernel's C tile
	gemmNR = 16   // columns of the micro-kernel's C tile (two AVX2 vectors)
	gemmKC = 256  // depth of a packed slice: an A micro-panel is 6 KiB, a B one 16 KiB
	gemmMC = 120  // rows of a packed A block: 120 KiB, half the L2 of this machine kind
	gemmNC = 1024 // columns of a packed B block: 1 MiB
)

// gemmSerialFlops is the problem size (2·m·n·k) below which a GEMM runs on
// the calling goroutine: handing work to the pool costs a few microseconds
// (about 10⁵ flops at the micro-kernel's rate), and each task packs its own
// share of B, so splitting a product of less than ~50 µs does not pay.
const gemmSerialFlops = 1 << 22

// gemmWorkspace holds one goroutine's packing buffers.
type gemmWorkspace struct {
	ap   []float32 // packed A block, gemmMC×gemmKC
	bp   []float32 // packed B block, gemmKC×gemmNC
	tile [gemmMR * gemmNR]float32
}

func newGemmWorkspace() *gemmWorkspace {
	return &gemmWorkspace{
		ap: make([]float32, gemmMC*gemmKC),
		bp: make([]float32, gemmKC*gemmNC),
	}
}

// gemmArgs is one (possibly batched) GEMM call: problem p of a batch uses
// a[p*sa:], b[p*sb:], c[p*sc:].
type gemmArgs struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	sa, sb, sc     int
	kernel         gemmKernel
}

// gemmKernel adds alpha·Σ_p a[r*rsa+p*psa]*b[p*16+j] into c[r*ldc+j] for
// r < 6, j < 16, with b a packed micro-panel of depth kc ≥ 1 and a either a
// packed micro-panel (rsa = 1, psa = 6) or six rows of a row-major op(A) read
// in place (rsa = its row stride, psa = 1).
type gemmKernel func(kc int, a *float32, rsa, psa int, b, c *float32, ldc int, alpha float32)

// gemmTask is the block C[i0:i1, j0:j1] of batch problem p.
type gemmTask struct {
	args           *gemmArgs
	p              int
	i0, i1, j0, j1 int
	wg             *sync.WaitGroup
}

// run computes the task's block with the workspace ws.
func (t gemmTask) run(ws *gemmWorkspace) {
	g := t.args
	a, b, c := g.a[t.p*g.sa:], g.b[t.p*g.sb:], g.c[t.p*g.sc:]
	gemmBlock(g, ws, a, b, c, t.i0, t.i1, t.j0, t.j1)
}

// gemmBlock computes C[i0:i1, j0:j1] = alpha op(A) op(B) + beta C on that
// block of one problem.
func gemmBlock(g *gemmArgs, ws *gemmWorkspace, a, b, c []float32, i0, i1, j0, j1 int) {
	m, n, k := g.m, g.n, g.k
	if g.beta != 1 {
		for i := i0; i < i1; i++ {
			row := c[i*n+j0 : i*n+j1]
			if g.beta == 0 {
				clear(row)
			} else {
				for j := range row {
					row[j] *= g.beta
				}
			}
		}
	}
	if k == 0 || g.alpha == 0 {
		return
	}
	for jc := j0; jc < j1; jc += gemmNC {
		nb := min(gemmNC, j1-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kb := min(gemmKC, k-pc)
			gemmPackB(ws.bp, g.transB, b, k, n, pc, kb, jc, nb)
			for ic := i0; ic < i1; ic += gemmMC {
				mb := min(gemmMC, i1-ic)
				if g.transA {
					gemmPackA(ws.ap, true, a, m, k, ic, mb, pc, kb)
					gemmMacro(g, ws, nil, c, n, ic, mb, jc, nb, kb)
					continue
				}
				// A row-major: full 6-row panels are read in place (no
				// packing); only a last partial panel is packed, zero-padded.
				full := mb / gemmMR * gemmMR
				if full < mb {
					gemmPackA(ws.ap[full*kb:], false, a, m, k, ic+full, mb-full, pc, kb)
				}
				gemmMacro(g, ws, a[ic*k+pc:], c, n, ic, mb, jc, nb, kb)
			}
		}
	}
}

// gemmMacro multiplies the mb×kb A block with the packed kb×nb B block into
// C[ic:ic+mb, jc:jc+nb]. A is packed in ws.ap when a is nil; otherwise a
// starts at op(A)[ic][pc] of a row-major op(A) with row stride g.k, and
// only a last partial panel is packed (in ws.ap, at its panel offset).
func gemmMacro(g *gemmArgs, ws *gemmWorkspace, a, c []float32, ldc, ic, mb, jc, nb, kb int) {
	for jr := 0; jr < nb; jr += gemmNR {
		nr := min(gemmNR, nb-jr)
		bp := &ws.bp[jr*kb]
		for ir := 0; ir < mb; ir += gemmMR {
			mr := min(gemmMR, mb-ir)
			ap, rsa, psa := &ws.ap[ir*kb], 1, gemmMR
			if a != nil && mr == gemmMR {
				ap, rsa, psa = &a[ir*g.k], g.k, 1
			}
			if mr == gemmMR && nr == gemmNR {
				g.kernel(kb, ap, rsa, psa, bp, &c[(ic+ir)*ldc+jc+jr], ldc, g.alpha)
				continue
			}
			clear(ws.tile[:])
			g.kernel(kb, ap, rsa, psa, bp, &ws.tile[0], gemmNR, g.alpha)
			for r := 0; r < mr; r++ {
				dst := c[(ic+ir+r)*ldc+jc+jr : (ic+ir+r)*ldc+jc+jr+nr]
				src := ws.tile[r*gemmNR : r*gemmNR+nr]
				for j := range dst {
					dst[j] += src[j]
				}
			}
		}
	}
}

// gemmPackA packs rows [ic, ic+mb) and inner indices [pc, pc+kb) of op(A)
// (m×k) into 6-row micro-panels: dst[q*6*kb + p*6 + r] = op(A)[ic+6q+r][pc+p],
// zero for rows past ic+mb.
func gemmPackA(dst []float32, transA bool, a []float32, m, k, ic, mb, pc, kb int) {
	for q := 0; q*gemmMR < mb; q++ {
		panel := dst[q*gemmMR*kb : (q+1)*gemmMR*kb]
		rows := min(gemmMR, mb-q*gemmMR)
		i := ic + q*gemmMR
		if transA {
			// op(A)[i][l] = a[l*m+i]: each step of p reads rows contiguous values.
			for p := 0; p < kb; p++ {
				src := a[(pc+p)*m+i : (pc+p)*m+i+rows]
				d := panel[p*gemmMR : p*gemmMR+gemmMR]
				copy(d, src)
				clear(d[rows:])
			}
			continue
		}
		for r := 0; r < rows; r++ {
			src := a[(i+r)*k+pc : (i+r)*k+pc+kb]
			for p, v := range src {
				panel[p*gemmMR+r] = v
			}
		}
		for r := rows; r < gemmMR; r++ {
			for p := 0; p < kb; p++ {
				panel[p*gemmMR+r] = 0
			}
		}
	}
}

// gemmPackB packs inner indices [pc, pc+kb) and columns [jc, jc+nb) of
// op(B) (k×n) into 16-column micro-panels:
// dst[q*16*kb + p*16 + j] = op(B)[pc+p][jc+16q+j], zero past column jc+nb.
func gemmPackB(dst []float32, transB bool, b []float32, k, n, pc, kb, jc, nb int) {
	for q := 0; q*gemmNR < nb; q++ {
		panel := dst[q*gemmNR*kb : (q+1)*gemmNR*kb]
		cols := min(gemmNR, nb-q*gemmNR)
		j := jc + q*gemmNR
		if !transB {
			for p := 0; p < kb; p++ {
				src := b[(pc+p)*n+j : (pc+p)*n+j+cols]
				d := panel[p*gemmNR : p*gemmNR+gemmNR]
				copy(d, src)
				clear(d[cols:])
			}
			continue
		}
		// op(B)[l][j] = b[j*k+l]: column j of op(B) is contiguous.
		for jj := 0; jj < cols; jj++ {
			src := b[(j+jj)*k+pc : (j+jj)*k+pc+kb]
			for p, v := range src {
				panel[p*gemmNR+jj] = v
			}
		}
		for jj := cols; jj < gemmNR; jj++ {
			for p := 0; p < kb; p++ {
				panel[p*gemmNR+jj] = 0
			}
		}
	}
}

// gemmPool is a fixed set of worker goroutines, each with its own
// workspace, that run gemmTasks. Workers exit when tasks is closed.
type gemmPool struct {
	tasks chan gemmTask
}

func newGemmPool(workers int) *gemmPool {
	p := &gemmPool{tasks: make(chan gemmTask, 4*workers)}
	for w := 0; w < workers; w++ {
		go gemmWorker(p.tasks)
	}
	return p
}

func gemmWorker(tasks <-chan gemmTask) {
	ws := newGemmWorkspace()
	for t := range tasks {
		t.run(ws)
		t.wg.Done()
	}
}

// gemmGrid splits an m×n output over at most threads tasks: pm row blocks
// (multiples of 6 rows) times pn column blocks (multiples of 16 columns),
// chosen to minimise the largest task's cost, estimated as its
// multiply-adds plus the packing of its A rows and B columns.
func gemmGrid(m, n, k, threads int) (pm, pn int) {
	mu, nu := (m+gemmMR-1)/gemmMR, (n+gemmNR-1)/gemmNR
	best := -1.0
	pm, pn = 1, 1
	for i := 1; i <= min(threads, mu); i++ {
		for j := 1; j <= min(threads/i, nu); j++ {
			rows := float64((mu+i-1)/i) * gemmMR
			cols := float64((nu+j-1)/j) * gemmNR
			cost := float64(k) * (rows*cols + 4*(rows+cols))
			if best < 0 || cost < best {
				best, pm, pn = cost, i, j
			}
		}
	}
	return pm, pn
}

// gemmSplit returns the start of part i of count parts of units·unit
// elements (clamped to total).
func gemmSplit(total, unit, count, i int) int {
	units := (total + unit - 1) / unit
	return min(total, (units*i/count)*unit)
}

// defaultThreads returns GOMAXPROCS.
func defaultThreads() int { return runtime.GOMAXPROCS(0) }
