package kernels

// cudaKernelNames are the entry points of cudaKernelSource, in the order of
// the cudaFn constants.
var cudaKernelNames = [...]string{
	"k_softmax", "k_softmax_bwd", "k_layernorm", "k_layernorm_bwd", "k_layernorm_bwd_params",
	"k_add", "k_mul", "k_scale", "k_axpy", "k_add_bias", "k_sum_rows", "k_sum",
	"k_relu", "k_relu_bwd", "k_gelu", "k_gelu_bwd", "k_adam", "k_im2col", "k_col2im", "k_conv_bias_add", "k_conv_bias_grad",
}

// Indices into cudaKernelNames.
const (
	cuSoftmax = iota
	cuSoftmaxBwd
	cuLayerNorm
	cuLayerNormBwd
	cuLayerNormBwdParams
	cuAdd
	cuMul
	cuScale
	cuAxpy
	cuAddBias
	cuSumRows
	cuSum
	cuReLU
	cuReLUBwd
	cuGELU
	cuGELUBwd
	cuAdam
	cuIm2col
	cuCol2im
	cuConvBiasAdd
	cuConvBiasGrad
	cuNumKernels
)

// cudaBlock is the thread-block size of the row kernels (one block per row,
// a shared-memory tree reduction) and of the elementwise ones.
const cudaBlock = 256

// cudaKernelSource holds the CUDA C kernels of the CUDA backend, compiled by
// NVRTC when a backend starts. Each kernel implements the reference
// semantics of the Backend method it serves; row reductions accumulate in
// float (softmax, layer norm) or double (Sum), as the CPU backend does in
// float64.
const cudaKernelSource = `
#define BLOCK 256

__device__ float block_sum(float v, float* sh) {
  int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

__device__ float block_max(float v, float* sh) {
  int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] = fmaxf(sh[t], sh[t + s]);
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

extern "C" __global__ void k_softmax(const float* x, float* y, int rows, int cols) {
  __shared__ float sh[BLOCK];
  int i = blockIdx.x;
  const float* xr = x + (size_t)i * cols;
  float* yr = y + (size_t)i * cols;
  float m = -__int_as_float(0x7f800000);
  for (int j = threadIdx.x; j < cols; j += BLOCK) m = fmaxf(m, xr[j]);
  m = block_max(m, sh);
  float s = 0.f;
  for (int j = threadIdx.x; j < cols; j += BLOCK) { float e = expf(xr[j] - m); yr[j] = e; s += e; }
  s = block_sum(s, sh);
  float inv = 1.f / s;
  for (int j = threadIdx.x; j < cols; j += BLOCK) yr[j] *= inv;
}

extern "C" __global__ void k_softmax_bwd(const float* y, const float* dy, float* dx, int rows, int cols) {
  __shared__ float sh[BLOCK];
  size_t o = (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int j = threadIdx.x; j < cols; j += BLOCK) s += dy[o + j] * y[o + j];
  s = block_sum(s, sh);
  for (int j = threadIdx.x; j < cols; j += BLOCK) dx[o + j] = y[o + j] * (dy[o + j] - s);
}

extern "C" __global__ void k_layernorm(const float* x, const float* g, const float* b, float* y,
                                       float* mean, float* rstd, int rows, int cols, float eps) {
  __shared__ float sh[BLOCK];
  size_t o = (size_t)blockIdx.x * cols;
  float s = 0.f;
  for (int j = threadIdx.x; j < cols; j += BLOCK) s += x[o + j];
  float mu = block_sum(s, sh) / cols;
  s = 0.f;
  for (int j = threadIdx.x; j < cols; j += BLOCK) { float d = x[o + j] - mu; s += d * d; }
  float rs = rsqrtf(block_sum(s, sh) / cols + eps);
  for (int j = threadIdx.x; j < cols; j += BLOCK) y[o + j] = (x[o + j] - mu) * rs * g[j] + b[j];
  if (threadIdx.x == 0) { mean[blockIdx.x] = mu; rstd[blockIdx.x] = rs; }
}

extern "C" __global__ void k_layernorm_bwd(const float* x, const float* g, const float* mean, const float* rstd,
                                           const float* dy, float* dx, int rows, int cols) {
  __shared__ float sh[BLOCK];
  int i = blockIdx.x;
  size_t o = (size_t)i * cols;
  float mu = mean[i], rs = rstd[i];
  float sg = 0.f, sgx = 0.f;
  for (int j = threadIdx.x; j < cols; j += BLOCK) {
    float gg = dy[o + j] * g[j];
    sg += gg;
    sgx += gg * (x[o + j] - mu) * rs;
  }
  sg = block_sum(sg, sh) / cols;
  sgx = block_sum(sgx, sh) / cols;
  for (int j = threadIdx.x; j < cols; j += BLOCK) {
    float xh = (x[o + j] - mu) * rs;
    dx[o + j] = rs * (dy[o + j] * g[j] - sg - xh * sgx);
  }
}

// One thread per column: dgamma[j] += sum_i dy*xhat, dbeta[j] += sum_i dy.
extern "C" __global__ void k_layernorm_bwd_params(const float* x, const float* mean, const float* rstd,
                                                  const float* dy, float* dg, float* db, int rows, int cols) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float sg = 0.f, sb = 0.f;
  for (int i = 0; i < rows; i++) {
    size_t o = (size_t)i * cols + j;
    sg += dy[o] * (x[o] - mean[i]) * rstd[i];
    sb += dy[o];
  }
  dg[j] += sg;
  db[j] += sb;
}

extern "C" __global__ void k_add(const float* x, const float* y, float* z, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}

extern "C" __global__ void k_mul(const float* x, const float* y, float* z, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] * y[i];
}

extern "C" __global__ void k_scale(float a, float* x, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

extern "C" __global__ void k_axpy(float a, const float* x, float* y, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

extern "C" __global__ void k_add_bias(const float* b, float* x, int rows, int cols) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (long)rows * cols) x[i] += b[i % cols];
}

extern "C" __global__ void k_sum_rows(const float* x, float* dst, int rows, int cols) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float s = 0.f;
  for (int i = 0; i < rows; i++) s += x[(size_t)i * cols + j];
  dst[j] += s;
}

// One block; double accumulation; the result lands in out[0].
extern "C" __global__ void k_sum(const float* x, double* out, long n) {
  __shared__ double sh[BLOCK];
  double s = 0.0;
  for (long i = threadIdx.x; i < n; i += BLOCK) s += x[i];
  int t = threadIdx.x;
  sh[t] = s;
  __syncthreads();
  for (int k = BLOCK / 2; k > 0; k >>= 1) {
    if (t < k) sh[t] += sh[t + k];
    __syncthreads();
  }
  if (t == 0) out[0] = sh[0];
}

extern "C" __global__ void k_relu(const float* x, float* y, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

extern "C" __global__ void k_relu_bwd(const float* x, const float* dy, float* dx, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dx[i] = x[i] > 0.f ? dy[i] : 0.f;
}

#define GELU_C 0.7978845608028654f
#define GELU_A 0.044715f

extern "C" __global__ void k_gelu(const float* x, float* y, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = 0.5f * v * (1.f + tanhf(GELU_C * (v + GELU_A * v * v * v))); }
}

extern "C" __global__ void k_gelu_bwd(const float* x, const float* dy, float* dx, long n) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    float t = tanhf(GELU_C * (v + GELU_A * v * v * v));
    dx[i] = dy[i] * (0.5f * (1.f + t) + 0.5f * v * (1.f - t * t) * GELU_C * (1.f + 3.f * GELU_A * v * v));
  }
}

extern "C" __global__ void k_adam(float* p, const float* g, float* m, float* v, long n,
                                  float b1, float b2, float eps, float step, float inv_sqrt_bc2) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float gi = g[i];
  float mi = b1 * m[i] + (1.f - b1) * gi;
  float vi = b2 * v[i] + (1.f - b2) * gi * gi;
  m[i] = mi; v[i] = vi;
  p[i] -= step * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
}

// col[((c*R+r)*S+s)*P + oh*OW+ow] = x[c][oh*SH+r-PH][ow*SW+s-PW] (0 outside).
extern "C" __global__ void k_im2col(const float* x, float* col, int C, int H, int W, int R, int S,
                                    int SH, int SW, int PH, int PW, int OH, int OW) {
  long P = (long)OH * OW;
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)C * R * S * P) return;
  long row = idx / P; int pix = idx % P;
  int s = row % S; int r = (row / S) % R; int c = row / (S * R);
  int oh = pix / OW, ow = pix % OW;
  int h = oh * SH + r - PH, w = ow * SW + s - PW;
  col[idx] = (h >= 0 && h < H && w >= 0 && w < W) ? x[((long)c * H + h) * W + w] : 0.f;
}

// dx[c][h][w] = sum of the col entries im2col read from it (a gather, no atomics).
extern "C" __global__ void k_col2im(const float* col, float* dx, int C, int H, int W, int R, int S,
                                    int SH, int SW, int PH, int PW, int OH, int OW) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)C * H * W) return;
  int w = idx % W; int h = (idx / W) % H; int c = idx / ((long)W * H);
  long P = (long)OH * OW;
  float acc = 0.f;
  for (int r = 0; r < R; r++) {
    int t = h + PH - r;
    if (t < 0 || t % SH != 0) continue;
    int oh = t / SH;
    if (oh >= OH) continue;
    for (int s = 0; s < S; s++) {
      int u = w + PW - s;
      if (u < 0 || u % SW != 0) continue;
      int ow = u / SW;
      if (ow >= OW) continue;
      acc += col[(((long)c * R + r) * S + s) * P + (long)oh * OW + ow];
    }
  }
  dx[idx] = acc;
}

// y[k][p] += bias[k] for one image (K×P).
extern "C" __global__ void k_conv_bias_add(const float* bias, float* y, int K, long P) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (long)K * P) y[i] += bias[i / P];
}

// One block per channel k: db[k] += sum over n, p of dy[n][k][p].
extern "C" __global__ void k_conv_bias_grad(const float* dy, float* db, int N, int K, long P) {
  __shared__ float sh[BLOCK];
  int k = blockIdx.x;
  float s = 0.f;
  for (int n = 0; n < N; n++)
    for (long p = threadIdx.x; p < P; p += BLOCK) s += dy[((long)n * K + k) * P + p];
  s = block_sum(s, sh);
  if (threadIdx.x == 0) db[k] += s;
}
`
