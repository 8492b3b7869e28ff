#!/usr/bin/env bash
# device-check.sh — check the kernels' CUDA backend on a GPU machine that has
# no Go toolchain, in two phases:
#
#   scripts/device-check.sh build OUTDIR   # here, on a machine with Go
#   scripts/device-check.sh run   OUTDIR   # there, on the GPU machine
#   scripts/device-check.sh all   OUTDIR   # both, on one machine
#
# build compiles (CGO_ENABLED=0, so no libc or CUDA headers are linked) the
# kernels test binary and the kbench test binary into OUTDIR/bin, with a copy
# of this script. Carry OUTDIR to the GPU machine (inside the repository it
# travels with the working tree: the binaries are named *.bin, not *.test,
# which .gitignore would drop), then run there:
#
#   1. a probe: nvidia-smi, the CUDA libraries found (CUDA 13 wheels under
#      Python site-packages: nvidia/*/lib), CUDAAvailable's reason;
#   2. parity of every CUDA kernel and cuBLAS GEMM against the float64
#      reference (go test -run CUDA: TestCUDAParity, TestCUDATimeGemm,
#      TestCUDAAbsentIsClean), guard bands included;
#   3. the kernel benchmark (kbench.Run: reference f64, f32 CPU 1 core / all
#      cores, cuBLAS device-resident and with host copies) as JSON;
#   4. the whole kernels test suite in -short mode on that machine's CPU.
#
# Results land in OUTDIR: probe.txt, parity.txt, kbench.json, kbench.txt,
# kernels-short.txt and summary.json. Each step has its own timeout; the run
# phase takes about 2–4 minutes on an H200 host (well inside 15 minutes).
set -u -o pipefail

phase=${1:-}
out=${2:-}
if [[ -z "$phase" || -z "$out" ]]; then
	echo "usage: $0 build|run|all OUTDIR" >&2
	exit 2
fi
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)

build() {
	local root
	root=$(cd "$(dirname "$0")/.." && pwd)
	cd "$root" || exit 1
	echo "building into $out/bin"
	CGO_ENABLED=0 go test -c -o "$out/bin/kernels_test.bin" ./kernels/ || exit 1
	CGO_ENABLED=0 go test -c -o "$out/bin/kbench_test.bin" ./kernels/kbench/ || exit 1
	cp "$0" "$out/bin/device-check.sh"
	git -C "$root" rev-parse HEAD >"$out/bin/commit.txt" 2>/dev/null || true
	ls -l "$out/bin"
}

# cuda_lib_dirs prints the directories holding cuBLAS/NVRTC: site-packages'
# nvidia/*/lib (CUDA 13 wheels put everything in nvidia/cu13/lib), then any
# found by a bounded search.
cuda_lib_dirs() {
	local py sites d
	for py in python3 python; do
		command -v "$py" >/dev/null || continue
		sites=$("$py" -c 'import site,sys; print("\n".join(site.getsitepackages()+[site.getusersitepackages()]+sys.path))' 2>/dev/null)
		for d in $sites; do
			for lib in "$d"/nvidia/*/lib; do
				[[ -d "$lib" ]] && echo "$lib"
			done
		done
		break
	done
	timeout 60 find / -xdev \( -name 'libcublas.so.*' -o -name 'libnvrtc.so.*' \) -not -path '/proc/*' 2>/dev/null |
		xargs -r -n1 dirname
}

run() {
	local bin="$out/bin" rc_parity rc_bench rc_short dirs
	cd "$out" || exit 1
	{
		echo "== host"; uname -a; nproc
		echo "== nvidia-smi"; (nvidia-smi -L && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv) 2>&1 || true
		echo "== commit"; cat "$bin/commit.txt" 2>/dev/null || true
	} >probe.txt
	if [[ -z "${ACCERL_CUDA_LIB_DIR:-}" ]]; then
		dirs=$(cuda_lib_dirs | awk '!seen[$0]++' | paste -sd: -)
		export ACCERL_CUDA_LIB_DIR="$dirs"
	fi
	echo "== ACCERL_CUDA_LIB_DIR=$ACCERL_CUDA_LIB_DIR" >>probe.txt
	for d in ${ACCERL_CUDA_LIB_DIR//:/ }; do ls "$d" 2>/dev/null | grep -E 'cublas|nvrtc' | sed "s|^|$d/|"; done >>probe.txt

	echo "parity (go test -run CUDA) ..."
	timeout 300 "$bin/kernels_test.bin" -test.run 'CUDA' -test.v -test.count=1 -test.timeout 280s >parity.txt 2>&1
	rc_parity=$?
	echo "benchmark ..."
	ACCERL_KBENCH_OUT="$out/kbench.json" timeout 300 "$bin/kbench_test.bin" -test.run 'WriteReport' -test.v -test.count=1 -test.timeout 280s >kbench.txt 2>&1
	rc_bench=$?
	echo "kernels tests (-short) ..."
	timeout 240 "$bin/kernels_test.bin" -test.short -test.count=1 -test.timeout 220s >kernels-short.txt 2>&1
	rc_short=$?

	local avail pass fail skip
	avail=$(grep -m1 'CUDAAvailable =' parity.txt | sed 's/.*CUDAAvailable = //; s/"/\\"/g')
	pass=$(grep -c -- '^--- PASS' parity.txt)
	fail=$(grep -c -- '^--- FAIL' parity.txt)
	skip=$(grep -c -- '^--- SKIP' parity.txt)
	cat >summary.json <<EOF
{
  "cuda_available": "$avail",
  "parity_rc": $rc_parity,
  "parity_tests": {"pass": $pass, "fail": $fail, "skip": $skip},
  "bench_rc": $rc_bench,
  "bench_json": "kbench.json",
  "kernels_short_rc": $rc_short,
  "cuda_lib_dir": "$ACCERL_CUDA_LIB_DIR"
}
EOF
	cat summary.json
	grep -E -- '^(--- |FAIL|ok|PASS)' parity.txt | head -40
	sed -n '/cpu backend/,/GFLOP\/s;/p' kbench.txt
	[[ $rc_parity -eq 0 && $rc_bench -eq 0 ]]
}

case "$phase" in
build) build ;;
run) run ;;
all) build && run ;;
*)
	echo "unknown phase $phase (want build, run or all)" >&2
	exit 2
	;;
esac
