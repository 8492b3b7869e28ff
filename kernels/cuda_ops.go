//go:build linux && (amd64 || arm64)

package kernels

import "unsafe"

// The CUDA backend's row-wise, elementwise and optimiser operations: each copies its operands
// to the device, launches one of the NVRTC-compiled kernels (cuda_kernels.go) and copies the
// result back.

func (c *CUDA) Softmax(rows, cols int, x, y []float32) {
	backendCheckLen("CUDA.Softmax", len(x), rows*cols, len(y), rows*cols)
	if rows*cols == 0 {
		return
	}
	c.enter("Softmax")
	defer c.leave()
	px, py := c.up(0, x[:rows*cols]), c.buf(1, rows*cols)
	c.launch(cuSoftmax, rows, cudaBlock, px, py, cuI(rows), cuI(cols))
	c.down(y[:rows*cols], py)
}

func (c *CUDA) SoftmaxBackward(rows, cols int, y, dy, dx []float32) {
	backendCheckLen("CUDA.SoftmaxBackward", len(y), rows*cols, len(dy), rows*cols, len(dx), rows*cols)
	if rows*cols == 0 {
		return
	}
	c.enter("SoftmaxBackward")
	defer c.leave()
	py, pdy, pdx := c.up(0, y[:rows*cols]), c.up(1, dy[:rows*cols]), c.buf(2, rows*cols)
	c.launch(cuSoftmaxBwd, rows, cudaBlock, py, pdy, pdx, cuI(rows), cuI(cols))
	c.down(dx[:rows*cols], pdx)
}

func (c *CUDA) LayerNorm(rows, cols int, eps float32, x, gamma, beta, y, mean, rstd []float32) {
	backendCheckLen("CUDA.LayerNorm", len(x), rows*cols, len(gamma), cols, len(beta), cols,
		len(y), rows*cols, len(mean), rows, len(rstd), rows)
	if rows*cols == 0 {
		return
	}
	c.enter("LayerNorm")
	defer c.leave()
	px, pg, pb := c.up(0, x[:rows*cols]), c.up(1, gamma[:cols]), c.up(2, beta[:cols])
	py, pm, pr := c.buf(3, rows*cols), c.buf(4, rows), c.buf(5, rows)
	c.launch(cuLayerNorm, rows, cudaBlock, px, pg, pb, py, pm, pr, cuI(rows), cuI(cols), cuF(eps))
	c.down(y[:rows*cols], py)
	c.down(mean[:rows], pm)
	c.down(rstd[:rows], pr)
}

func (c *CUDA) LayerNormBackward(rows, cols int, x, gamma, mean, rstd, dy, dx, dgamma, dbeta []float32) {
	backendCheckLen("CUDA.LayerNormBackward", len(x), rows*cols, len(gamma), cols, len(mean), rows,
		len(rstd), rows, len(dy), rows*cols, len(dx), rows*cols)
	if dgamma != nil {
		backendCheckLen("CUDA.LayerNormBackward", len(dgamma), cols)
	}
	if dbeta != nil {
		backendCheckLen("CUDA.LayerNormBackward", len(dbeta), cols)
	}
	if rows*cols == 0 {
		return
	}
	c.enter("LayerNormBackward")
	defer c.leave()
	px, pg, pm, pr := c.up(0, x[:rows*cols]), c.up(1, gamma[:cols]), c.up(2, mean[:rows]), c.up(3, rstd[:rows])
	pdy, pdx := c.up(4, dy[:rows*cols]), c.buf(5, rows*cols)
	c.launch(cuLayerNormBwd, rows, cudaBlock, px, pg, pm, pr, pdy, pdx, cuI(rows), cuI(cols))
	c.down(dx[:rows*cols], pdx)
	if dgamma != nil || dbeta != nil {
		var pdg, pdb uint64
		if dgamma != nil {
			pdg = c.up(6, dgamma[:cols])
		} else {
			pdg = c.buf(6, cols)
		}
		if dbeta != nil {
			pdb = c.up(7, dbeta[:cols])
		} else {
			pdb = c.buf(7, cols)
		}
		c.launch(cuLayerNormBwdParams, cuGrid(cols), cudaBlock, px, pm, pr, pdy, pdg, pdb, cuI(rows), cuI(cols))
		if dgamma != nil {
			c.down(dgamma[:cols], pdg)
		}
		if dbeta != nil {
			c.down(dbeta[:cols], pdb)
		}
	}
}

// binary runs an elementwise kernel f(x, y, out, n) over len(out) values.
func (c *CUDA) binary(op string, f int, x, y, out []float32) {
	n := len(out)
	if n == 0 {
		return
	}
	c.enter(op)
	defer c.leave()
	px, py, po := c.up(0, x[:n]), c.up(1, y[:n]), c.buf(2, n)
	c.launch(f, cuGrid(n), cudaBlock, px, py, po, cuL(n))
	c.down(out, po)
}

// unary runs an elementwise kernel f(x, out, n) over len(out) values.
func (c *CUDA) unary(op string, f int, x, out []float32) {
	n := len(out)
	if n == 0 {
		return
	}
	c.enter(op)
	defer c.leave()
	px, po := c.up(0, x[:n]), c.buf(1, n)
	c.launch(f, cuGrid(n), cudaBlock, px, po, cuL(n))
	c.down(out, po)
}

func (c *CUDA) Add(x, y, dst []float32) {
	backendCheckLen("CUDA.Add", len(x), len(dst), len(y), len(dst))
	c.binary("Add", cuAdd, x, y, dst)
}

func (c *CUDA) Mul(x, y, dst []float32) {
	backendCheckLen("CUDA.Mul", len(x), len(dst), len(y), len(dst))
	c.binary("Mul", cuMul, x, y, dst)
}

func (c *CUDA) Scale(alpha float32, x []float32) {
	if len(x) == 0 {
		return
	}
	c.enter("Scale")
	defer c.leave()
	px := c.up(0, x)
	c.launch(cuScale, cuGrid(len(x)), cudaBlock, cuF(alpha), px, cuL(len(x)))
	c.down(x, px)
}

func (c *CUDA) Axpy(alpha float32, x, y []float32) {
	backendCheckLen("CUDA.Axpy", len(x), len(y))
	if len(y) == 0 {
		return
	}
	c.enter("Axpy")
	defer c.leave()
	px, py := c.up(0, x[:len(y)]), c.up(1, y)
	c.launch(cuAxpy, cuGrid(len(y)), cudaBlock, cuF(alpha), px, py, cuL(len(y)))
	c.down(y, py)
}

func (c *CUDA) AddBias(rows, cols int, bias, x []float32) {
	backendCheckLen("CUDA.AddBias", len(bias), cols, len(x), rows*cols)
	if rows*cols == 0 {
		return
	}
	c.enter("AddBias")
	defer c.leave()
	pb, px := c.up(0, bias[:cols]), c.up(1, x[:rows*cols])
	c.launch(cuAddBias, cuGrid(rows*cols), cudaBlock, pb, px, cuI(rows), cuI(cols))
	c.down(x[:rows*cols], px)
}

func (c *CUDA) SumRows(rows, cols int, x, dst []float32) {
	backendCheckLen("CUDA.SumRows", len(x), rows*cols, len(dst), cols)
	if cols == 0 {
		return
	}
	c.enter("SumRows")
	defer c.leave()
	px, pd := c.up(0, x[:rows*cols]), c.up(1, dst[:cols])
	c.launch(cuSumRows, cuGrid(cols), cudaBlock, px, pd, cuI(rows), cuI(cols))
	c.down(dst[:cols], pd)
}

func (c *CUDA) Sum(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	c.enter("Sum")
	defer c.leave()
	px, po := c.up(0, x), c.buf(1, 2)
	c.launch(cuSum, 1, cudaBlock, px, po, cuL(len(x)))
	var s float64
	c.must("cuMemcpyDtoH", c.l.drv.cuMemcpyDtoH(unsafe.Pointer(&s), po, 8))
	return float32(s)
}

func (c *CUDA) ReLU(x, y []float32) {
	backendCheckLen("CUDA.ReLU", len(x), len(y))
	c.unary("ReLU", cuReLU, x, y)
}

func (c *CUDA) ReLUBackward(x, dy, dx []float32) {
	backendCheckLen("CUDA.ReLUBackward", len(x), len(dx), len(dy), len(dx))
	c.binary("ReLUBackward", cuReLUBwd, x, dy, dx)
}

func (c *CUDA) GELU(x, y []float32) {
	backendCheckLen("CUDA.GELU", len(x), len(y))
	c.unary("GELU", cuGELU, x, y)
}

func (c *CUDA) GELUBackward(x, dy, dx []float32) {
	backendCheckLen("CUDA.GELUBackward", len(x), len(dx), len(dy), len(dx))
	c.binary("GELUBackward", cuGELUBwd, x, dy, dx)
}

func (c *CUDA) AdamStep(o AdamOptions, params, grads, m, v []float32) {
	n := len(params)
	if len(grads) != n || len(m) != n || len(v) != n {
		backendCheckLen("CUDA.AdamStep", n, len(grads), n, len(m), n, len(v), len(grads), n, len(m), n, len(v), n)
	}
	stepSize, sqrtBC2 := o.adamCoefficients()
	if n == 0 {
		return
	}
	c.enter("AdamStep")
	defer c.leave()
	pp, pg, pm, pv := c.up(0, params), c.up(1, grads), c.up(2, m), c.up(3, v)
	c.launch(cuAdam, cuGrid(n), cudaBlock, pp, pg, pm, pv, cuL(n), cuF(o.Beta1), cuF(o.Beta2), cuF(o.Eps),
		cuF(float32(stepSize)), cuF(float32(1/sqrtBC2)))
	c.down(params, pp)
	c.down(m, pm)
	c.down(v, pv)
}
