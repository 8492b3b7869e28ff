package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Dense is a fully connected layer
//
//	y[i][o] = Σ_j x[i][j] * W[o][j] + B[o]
//
// for a batch of n rows. W is Out×In row-major (PyTorch's nn.Linear layout),
// so W[o][j] is W[o*In+j]. W and B are views into the owner's flat parameter
// slice, GW and GB views into the owner's flat gradient slice; see [Dense.Bind].
type Dense struct {
	In, Out int
	W, B    []float64 // parameters (views)
	GW, GB  []float64 // gradients, same shapes (views)
}

// NewDense returns an unbound in→out layer; call Bind before use.
func NewDense(in, out int) *Dense {
	if in <= 0 || out <= 0 {
		panic(fmt.Sprintf("kernels: NewDense: sizes must be positive, got %d→%d", in, out))
	}
	return &Dense{In: in, Out: out}
}

// NumParams returns Out*In + Out: the weights first, then the biases.
func (d *Dense) NumParams() int { return d.Out*d.In + d.Out }

// Bind points W, B at params and GW, GB at grads. Both slices must have
// length NumParams; the weights come first, then the biases.
func (d *Dense) Bind(params, grads []float64) {
	if len(params) != d.NumParams() || len(grads) != d.NumParams() {
		panic(fmt.Sprintf("kernels: Dense.Bind: got %d params and %d grads, want %d",
			len(params), len(grads), d.NumParams()))
	}
	nw := d.Out * d.In
	d.W, d.B = params[:nw:nw], params[nw:]
	d.GW, d.GB = grads[:nw:nw], grads[nw:]
}

// Forward computes y = x Wᵀ + B for n rows; x is n×In, y is n×Out.
func (d *Dense) Forward(x []float64, n int, y []float64) {
	if len(x) != n*d.In || len(y) != n*d.Out {
		panic(fmt.Sprintf("kernels: Dense.Forward: x has %d values and y %d, want %d and %d",
			len(x), len(y), n*d.In, n*d.Out))
	}
	matmul(false, true, n, d.Out, d.In, 1, x, d.W, 0, y)
	for i := 0; i < n; i++ {
		row := y[i*d.Out : (i+1)*d.Out]
		for o, b := range d.B {
			row[o] += b
		}
	}
}

// Backward takes dy = ∂L/∂y (n×Out) and the forward input x (n×In),
// accumulates the parameter gradients
//
//	GW[o][j] += Σ_i dy[i][o] * x[i][j],   GB[o] += Σ_i dy[i][o]
//
// and, when dx is non-nil, overwrites dx (n×In) with ∂L/∂x = dy W.
func (d *Dense) Backward(x, dy []float64, n int, dx []float64) {
	if len(x) != n*d.In || len(dy) != n*d.Out {
		panic(fmt.Sprintf("kernels: Dense.Backward: x has %d values and dy %d, want %d and %d",
			len(x), len(dy), n*d.In, n*d.Out))
	}
	matmul(true, false, d.Out, d.In, n, 1, dy, x, 1, d.GW)
	for i := 0; i < n; i++ {
		row := dy[i*d.Out : (i+1)*d.Out]
		for o, g := range row {
			d.GB[o] += g
		}
	}
	if dx != nil {
		if len(dx) != n*d.In {
			panic(fmt.Sprintf("kernels: Dense.Backward: dx has %d values, want %d", len(dx), n*d.In))
		}
		matmul(false, false, n, d.In, d.Out, 1, dy, d.W, 0, dx)
	}
}

// InitOrthogonal sets W to a (semi-)orthogonal matrix scaled by gain and B
// to zero, as PyTorch's nn.init.orthogonal_ and CleanRL's layer_init do
// (Saxe et al. 2014, "Exact solutions to the nonlinear dynamics of learning
// in deep linear neural networks"): draw a Gaussian matrix, take the Q of its
// QR decomposition with the signs fixed by diag(R), transposed when Out < In
// so that the rows (Out ≤ In) or the columns (Out ≥ In) are orthonormal.
func (d *Dense) InitOrthogonal(gain float64, rng *rand.Rand) {
	orthogonal(d.Out, d.In, gain, rng, d.W)
	clear(d.B)
}

// orthogonal fills w (rows×cols, row-major) with gain * a random matrix with
// orthonormal rows (rows ≤ cols) or orthonormal columns (rows ≥ cols).
func orthogonal(rows, cols int, gain float64, rng *rand.Rand, w []float64) {
	// Factorise the tall orientation: m ≥ n.
	m, n := rows, cols
	transposed := rows < cols
	if transposed {
		m, n = cols, rows
	}
	g := mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			// Thin Q is the first n columns; multiplying column j by
			// sign(R[j][j]) makes the distribution uniform (Haar).
			v := gain * q.At(i, j) * sign(r.At(j, j))
			if transposed {
				w[j*cols+i] = v
			} else {
				w[i*cols+j] = v
			}
		}
	}
}

// sign returns -1 for negative x and 1 otherwise (a zero diagonal of R has
// probability zero for a Gaussian matrix).
func sign(x float64) float64 {
	if math.Signbit(x) {
		return -1
	}
	return 1
}
