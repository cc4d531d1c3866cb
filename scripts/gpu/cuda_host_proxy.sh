#!/usr/bin/env bash
# The CUDA host-proxy path on a GPU machine (issue 8 item 4): builds the GPU check and the latency
# benchmark with nvcc alone, runs the check, then the benchmark, and prints the table.
#
# Standalone build: the GPU machines have the CUDA toolkit and a C++ compiler but no Debian -dev
# packages (no fmt, toml, SimGrid, Catch2), so this compiles only what the path needs (the ring,
# the proxy, the test-double issuer, the engine's ImmCounter, the kernels) with nvcc, and puts
# backends/hw/cuda/standalone first on the include path for the two fmt::format specs those
# files use. The CMake build (cuda_host_proxy_gpu_check, cuda_host_proxy_bench) builds the same
# sources against the real libfmt where nvcc exists.
#
# Issuer: the in-process copy test double (ShuffledCopyIssuer), not libfabric: the GPU machines
# have no NIC and no libfabric, and the figure measured here is the GPU <-> proxy path.
#
# Inputs (environment):
#   OUT          where the logs, table and JSON go (default: ./cuda-host-proxy-out)
#   ITERATIONS   round trips per benchmark row (default: 20000)
#   CUDA_ARCH    compute capability to build SASS for (default: 90, H100/H200); PTX for the same
#                is embedded too, so a newer GPU JIT-compiles it
#   BUILD_ONLY   1: build and stop (checks the build on a machine without a GPU)
#   BUILD_DIR    keep the binaries (gpu_proxy_check, cuda_host_proxy) there (default: a temporary
#                directory, removed at exit); for running two builds alternately on one machine
# Exit: 0 all passed, 1 a check or the benchmark failed, 2 the build failed, 77 no GPU.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$PWD/cuda-host-proxy-out}"
iterations="${ITERATIONS:-20000}"
arch="${CUDA_ARCH:-90}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$out"
if [[ -n "${BUILD_DIR:-}" ]]; then
  build="$BUILD_DIR"
  mkdir -p "$build"
else
  build="$(mktemp -d)"
  trap 'rm -rf "$build"' EXIT
fi

die() { echo "cuda_host_proxy: $*" >&2; exit "${2:-1}"; }
[[ -x "$nvcc" ]] || die "nvcc not found (set NVCC)" 2

echo "== build ($("$nvcc" --version | tail -n1); host $(${CXX:-c++} --version | head -n1))"
cxxflags=(-std=c++20 -O2 -g -I"$root/backends/hw/cuda/standalone" -I"$root")
gencode=(-gencode "arch=compute_${arch},code=[sm_${arch},compute_${arch}]")
common=(backends/hw/cuda/descriptor_ring.cpp backends/hw/cuda/host_proxy.cpp
        backends/hw/cuda/shuffled_copy_issuer.cpp engine/imm/imm_counter.cpp
        backends/hw/cuda/proxy_kernels.cu backends/hw/cuda/gpu_proxy_run.cu)
objs=()
for src in "${common[@]}"; do
  obj="$build/$(basename "$src").o"
  "$nvcc" "${cxxflags[@]}" "${gencode[@]}" -Xcompiler -pthread -c "$root/$src" -o "$obj" \
    >"$build/log" 2>&1 || { cat "$build/log"; die "compiling $src failed" 2; }
  objs+=("$obj")
done
for prog in backends/hw/cuda/gpu_proxy_check.cu bench/cuda_host_proxy.cu; do
  name="$(basename "$prog" .cu)"
  "$nvcc" "${cxxflags[@]}" "${gencode[@]}" -Xcompiler -pthread "$root/$prog" "${objs[@]}" -o "$build/$name" \
    >"$build/log" 2>&1 || { cat "$build/log"; die "building $prog failed" 2; }
done
echo "built: gpu_proxy_check, cuda_host_proxy (sm_${arch} + compute_${arch} PTX)"
[[ "${BUILD_ONLY:-0}" == 1 ]] && exit 0

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,driver_version --format=csv | tee "$out/gpu.txt" || true

echo "== GPU check"
set +e
"$build/gpu_proxy_check" | tee "$out/gpu_check.txt"
check_rc=${PIPESTATUS[0]}
set -e
[[ $check_rc == 77 ]] && exit 77
[[ $check_rc == 0 ]] || die "GPU check failed (rc $check_rc)"

echo "== latency: GPU-observed round trip through the proxy vs the mapped-memory ping-pong"
set +e
"$build/cuda_host_proxy" "$iterations" "$out/cuda_host_proxy.json" | tee "$out/bench.txt"
bench_rc=${PIPESTATUS[0]}
set -e
[[ $bench_rc == 0 ]] || die "benchmark failed (rc $bench_rc)"
