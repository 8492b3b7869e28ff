//go:build linux && (amd64 || arm64)

package kernels

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA backend loads three libraries at run time with purego (no cgo, no
// CUDA headers at build time), the way go-nvml loads NVML: the driver API
// (libcuda.so.1, installed with the NVIDIA driver), cuBLAS and NVRTC (from a
// CUDA toolkit or the nvidia-* Python wheels), any major version from 11 on.

// cudaDriver holds the driver API entry points. Every function returns a
// CUresult (0 is CUDA_SUCCESS).
type cudaDriver struct {
	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, n int32, dev int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuCtxSynchronize          func() int32
	cuMemAlloc                func(p *uint64, bytes uint64) int32
	cuMemFree                 func(p uint64) int32
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, bytes uint64) int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, bytes uint64) int32
	cuModuleLoadData          func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleUnload            func(mod uintptr) int32
	cuModuleGetFunction       func(f *uintptr, mod uintptr, name *byte) int32
	cuLaunchKernel            func(f uintptr, gx, gy, gz, bx, by, bz, shmem uint32, stream uintptr, params, extra unsafe.Pointer) int32
	cuGetErrorName            func(res int32, name **byte) int32
}

// cudaBLAS holds the cuBLAS entry points; each returns a cublasStatus_t.
type cudaBLAS struct {
	cublasCreate  func(h *uintptr) int32
	cublasDestroy func(h uintptr) int32
	cublasSgemm   func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32,
		b uint64, ldb int32, beta *float32, c uint64, ldc int32) int32
	cublasSgemmStridedBatched func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, sa int64,
		b uint64, ldb int32, sb int64, beta *float32, c uint64, ldc int32, sc int64, batch int32) int32
}

// cudaNVRTC holds the NVRTC entry points; each returns an nvrtcResult.
type cudaNVRTC struct {
	nvrtcVersion           func(major, minor *int32) int32
	nvrtcCreateProgram     func(prog *uintptr, src, name *byte, nHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcCompileProgram    func(prog uintptr, nOptions int32, options **byte) int32
	nvrtcGetProgramLogSize func(prog uintptr, n *uint64) int32
	nvrtcGetProgramLog     func(prog uintptr, log *byte) int32
	nvrtcGetCUBINSize      func(prog uintptr, n *uint64) int32
	nvrtcGetCUBIN          func(prog uintptr, out *byte) int32
	nvrtcGetPTXSize        func(prog uintptr, n *uint64) int32
	nvrtcGetPTX            func(prog uintptr, out *byte) int32
	nvrtcDestroyProgram    func(prog *uintptr) int32
}

// cudaLibs is the outcome of loading and initialising the three libraries
// once per process.
type cudaLibs struct {
	drv     cudaDriver
	blas    cudaBLAS
	rtc     cudaNVRTC
	paths   [3]string // where libcuda, cuBLAS and NVRTC were found
	devices int
	err     error // why CUDA is unavailable; nil when it is
}

var (
	cudaOnce   sync.Once
	cudaLoaded cudaLibs
)

// CUDAAvailable reports whether the CUDA backend can run here: an NVIDIA
// driver (libcuda.so.1) with at least one device, plus cuBLAS and NVRTC. When
// it cannot, reason says why ("no NVIDIA driver: ...", "no CUDA device",
// "no cuBLAS found in ..."); that is a normal state, not an error. When it
// can, reason names the libraries found. The probe runs once per process.
func CUDAAvailable() (ok bool, reason string) {
	l := loadCUDA()
	if l.err != nil {
		return false, l.err.Error()
	}
	return true, fmt.Sprintf("%d device(s); %s; %s; %s", l.devices, l.paths[0], l.paths[1], l.paths[2])
}

func loadCUDA() *cudaLibs {
	cudaOnce.Do(func() { cudaLoaded.err = cudaLoaded.load() })
	return &cudaLoaded
}

// cudaLibDirs lists the directories searched for cuBLAS and NVRTC (and
// libcuda when the dynamic loader's own search misses it), in order: the
// colon-separated list in ACCERL_CUDA_LIB_DIR, LD_LIBRARY_PATH, the CUDA
// toolkit's usual homes, the distribution's library directories, and the
// nvidia/*/lib directories of Python site-packages (pip's nvidia-cublas-cu12,
// nvidia-cublas (CUDA 13: nvidia/cu13/lib), nvidia-cuda-nvrtc wheels) in
// system, user, virtualenv and conda installs.
func cudaLibDirs() []string {
	var dirs []string
	add := func(list string) {
		for _, d := range filepath.SplitList(list) {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	add(os.Getenv("ACCERL_CUDA_LIB_DIR"))
	add(os.Getenv("LD_LIBRARY_PATH"))
	if p := os.Getenv("CUDA_PATH"); p != "" {
		add(filepath.Join(p, "lib64"))
	}
	add("/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/targets/sbsa-linux/lib")
	if m, _ := filepath.Glob("/usr/local/cuda-*/lib64"); m != nil {
		dirs = append(dirs, m...)
	}
	add("/usr/lib/x86_64-linux-gnu:/usr/lib/aarch64-linux-gnu:/usr/lib64:/usr/lib:/usr/lib/wsl/lib")
	var sites []string
	for _, root := range []string{"/usr/lib", "/usr/local/lib", "/opt/conda/lib", os.Getenv("HOME") + "/.local/lib",
		os.Getenv("VIRTUAL_ENV") + "/lib", os.Getenv("CONDA_PREFIX") + "/lib"} {
		for _, pat := range []string{"python3*/site-packages", "python3*/dist-packages"} {
			m, _ := filepath.Glob(filepath.Join(root, pat))
			sites = append(sites, m...)
		}
	}
	sites = append(sites, "/usr/lib/python3/dist-packages")
	for _, s := range sites {
		for _, pat := range []string{"nvidia/*/lib", "nvidia/*/lib64"} {
			m, _ := filepath.Glob(filepath.Join(s, pat))
			dirs = append(dirs, m...)
		}
	}
	return dirs
}

// cudaOpen opens the first of names found in dirs (in order of names, then
// dirs), then by bare name through the dynamic loader's own search. Before
// opening a library it opens the companions that lie next to it (cuBLAS
// needs cuBLASLt, NVRTC its builtins), so that an absolute path works
// without LD_LIBRARY_PATH.
func cudaOpen(names []string, dirs []string, companions func(dir, name string) []string) (uintptr, string, error) {
	var errs []string
	for _, name := range names {
		for _, d := range dirs {
			p := filepath.Join(d, name)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if companions != nil {
				for _, c := range companions(d, name) {
					purego.Dlopen(c, purego.RTLD_NOW|purego.RTLD_GLOBAL) //nolint:errcheck // best effort; the main open reports
				}
			}
			h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
			if err == nil {
				return h, p, nil
			}
			errs = append(errs, err.Error())
		}
	}
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return h, name, nil
		}
		if len(errs) < 4 {
			errs = append(errs, err.Error())
		}
	}
	return 0, "", errors.New(strings.Join(errs, "; "))
}

// cudaBind resolves each symbol into its function pointer field.
func cudaBind(h uintptr, syms map[string]any) error {
	for name, fptr := range syms {
		sym, err := purego.Dlsym(h, name)
		if err != nil {
			return fmt.Errorf("symbol %s: %w", name, err)
		}
		purego.RegisterFunc(fptr, sym)
	}
	return nil
}

func (l *cudaLibs) load() error {
	dirs := cudaLibDirs()
	hc, pc, err := cudaOpen([]string{"libcuda.so.1", "libcuda.so"}, nil, nil)
	if err != nil {
		// The loader's search missed it; try the listed directories (a
		// driver in a non-standard place, a WSL install).
		if hc, pc, err = cudaOpen([]string{"libcuda.so.1", "libcuda.so"}, dirs, nil); err != nil {
			return fmt.Errorf("no NVIDIA driver (libcuda.so.1 not loadable): %v", err)
		}
	}
	d := &l.drv
	if err := cudaBind(hc, map[string]any{
		"cuInit": &d.cuInit, "cuDriverGetVersion": &d.cuDriverGetVersion,
		"cuDeviceGetCount": &d.cuDeviceGetCount, "cuDeviceGet": &d.cuDeviceGet,
		"cuDeviceGetName": &d.cuDeviceGetName, "cuDeviceGetAttribute": &d.cuDeviceGetAttribute,
		"cuDevicePrimaryCtxRetain": &d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRelease_v2": &d.cuDevicePrimaryCtxRelease,
		"cuCtxSetCurrent": &d.cuCtxSetCurrent, "cuCtxSynchronize": &d.cuCtxSynchronize,
		"cuMemAlloc_v2": &d.cuMemAlloc, "cuMemFree_v2": &d.cuMemFree,
		"cuMemcpyHtoD_v2": &d.cuMemcpyHtoD, "cuMemcpyDtoH_v2": &d.cuMemcpyDtoH,
		"cuModuleLoadData": &d.cuModuleLoadData, "cuModuleUnload": &d.cuModuleUnload,
		"cuModuleGetFunction": &d.cuModuleGetFunction, "cuLaunchKernel": &d.cuLaunchKernel,
		"cuGetErrorName": &d.cuGetErrorName,
	}); err != nil {
		return fmt.Errorf("libcuda %s: %w", pc, err)
	}
	if r := d.cuInit(0); r != 0 {
		return fmt.Errorf("no CUDA device: cuInit: %s", l.cuErrName(r))
	}
	var n int32
	if r := d.cuDeviceGetCount(&n); r != 0 || n == 0 {
		return fmt.Errorf("no CUDA device: cuDeviceGetCount = %d (%s)", n, l.cuErrName(r))
	}
	l.devices = int(n)

	versions := []string{"13", "12", "11"}
	var blasNames, rtcNames []string
	for _, v := range versions {
		blasNames = append(blasNames, "libcublas.so."+v)
		rtcNames = append(rtcNames, "libnvrtc.so."+v)
	}
	blasNames = append(blasNames, "libcublas.so")
	rtcNames = append(rtcNames, "libnvrtc.so")
	hb, pb, err := cudaOpen(blasNames, dirs, func(dir, name string) []string {
		return []string{filepath.Join(dir, strings.Replace(name, "libcublas", "libcublasLt", 1))}
	})
	if err != nil {
		return fmt.Errorf("no cuBLAS found (libcublas.so.{13,12,11}; set ACCERL_CUDA_LIB_DIR): %v", err)
	}
	b := &l.blas
	if err := cudaBind(hb, map[string]any{
		"cublasCreate_v2": &b.cublasCreate, "cublasDestroy_v2": &b.cublasDestroy,
		"cublasSgemm_v2": &b.cublasSgemm, "cublasSgemmStridedBatched": &b.cublasSgemmStridedBatched,
	}); err != nil {
		return fmt.Errorf("cuBLAS %s: %w", pb, err)
	}
	hr, pr, err := cudaOpen(rtcNames, dirs, func(dir, name string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, "libnvrtc-builtins.so*"))
		return m
	})
	if err != nil {
		return fmt.Errorf("no NVRTC found (libnvrtc.so.{13,12,11}; set ACCERL_CUDA_LIB_DIR): %v", err)
	}
	r := &l.rtc
	if err := cudaBind(hr, map[string]any{
		"nvrtcVersion": &r.nvrtcVersion, "nvrtcCreateProgram": &r.nvrtcCreateProgram,
		"nvrtcCompileProgram": &r.nvrtcCompileProgram, "nvrtcGetProgramLogSize": &r.nvrtcGetProgramLogSize,
		"nvrtcGetProgramLog": &r.nvrtcGetProgramLog, "nvrtcGetCUBINSize": &r.nvrtcGetCUBINSize,
		"nvrtcGetCUBIN": &r.nvrtcGetCUBIN, "nvrtcGetPTXSize": &r.nvrtcGetPTXSize, "nvrtcGetPTX": &r.nvrtcGetPTX,
		"nvrtcDestroyProgram": &r.nvrtcDestroyProgram,
	}); err != nil {
		return fmt.Errorf("NVRTC %s: %w", pr, err)
	}
	l.paths = [3]string{pc, pb, pr}
	return nil
}

// cuErrName returns the CUresult's name, e.g. "CUDA_ERROR_NO_DEVICE".
func (l *cudaLibs) cuErrName(r int32) string {
	var p *byte
	if l.drv.cuGetErrorName == nil || l.drv.cuGetErrorName(r, &p) != 0 || p == nil {
		return fmt.Sprintf("CUresult %d", r)
	}
	return cString(p)
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// cBytes returns s as a NUL-terminated byte slice.
func cBytes(s string) []byte { return append([]byte(s), 0) }

// cudaLoaderBuilt reports that this platform has the run-time loader
// (cuda_stub.go sets it false elsewhere).
const cudaLoaderBuilt = true
