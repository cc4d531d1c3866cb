#!/usr/bin/env bash
# The zero-buffer collectives on a GPU machine (issue 16 item 4): builds libzerobuf-railcheck.so
# with nvcc alone, starts two ranks (two processes) on GPU 0, or on GPUs 0 and 1 where there are
# two, and for every op over 8 B .. 256 MiB checks the output against torch.distributed's NCCL on
# the same inputs, times both, measures the extra device memory of each, then kills rank 1 and
# checks that rank 0's next call ends in a timeout error (zbccl seed §8.2) and what memory comes
# back (§8.1). Prints a table; writes zerobuf_gpu.json, the ranks' logs and the build log to $OUT.
#
# One GPU, two processes: the GPU time-slices between them, so the check is of correctness; the
# latencies are printed but their ratio to NCCL's means nothing (NCCL here also runs its two
# ranks as two "hosts" over loopback sockets: NCCL_HOSTID differs per rank, since NCCL refuses two
# ranks on one GPU of one host).
#
# Standalone build: the GPU machines have the CUDA toolkit, PyTorch and a C++ compiler but no
# Debian -dev packages, so this compiles the sources the library needs with nvcc, with
# backends/hw/cuda/standalone first on the include path for fmt::format (as cuda_host_proxy.sh).
#
# Inputs (environment):
#   OUT          where the logs, table and JSON go (default: ./zerobuf-gpu-out)
#   CUDA_ARCH    compute capability for SASS (default: 90, H100/H200), with PTX for newer parts
#   MAX_BYTES    largest message (default: 268435456 = 256 MiB)
#   BUILD_ONLY   1: build and stop (checks the build on a machine without a GPU)
#   JOBS         compilers run at once (default: every core)
#   OBJ_DIR      keep the objects here between runs (default: a fresh temporary folder): a source is
#                compiled again only when it, a header it includes, or the compile line changed
#   LIB_OUT      also copy the built library here (zerobuf_bench.sh builds through this script)
# Exit: 0 all correct and the dead peer turned into an error, 1 a check failed, 2 the build
# failed, 77 no GPU.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$PWD/zerobuf-gpu-out}"
arch="${CUDA_ARCH:-90}"
max_bytes="${MAX_BYTES:-268435456}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$out"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
objs="${OBJ_DIR:-$build}"
mkdir -p "$objs"

die() { echo "zerobuf_gpu: $*" >&2; exit "${2:-1}"; }
[[ -x "$nvcc" ]] || die "nvcc not found (set NVCC)" 2

echo "== build ($("$nvcc" --version | tail -n1))"
srcs=(engine/core/time.cpp engine/zerobuf/collective_program.cpp engine/zerobuf/rank_runner.cpp
      engine/zerobuf/sma_allocator.cpp engine/zerobuf/dual_heap.cpp
      engine/bootstrap/bootstrap_codec.cpp engine/bootstrap/bootstrap_rank.cpp engine/bootstrap/bootstrap_root.cpp
      engine/bootstrap/frame_auth.cpp engine/auth/job_key.cpp engine/auth/message_mac.cpp
      engine/core/engine_assert.cpp backends/hw/auth/job_key_source.cpp
      backends/hw/bootstrap/socket_address.cpp backends/hw/bootstrap/tcp_bootstrap.cpp
      backends/hw/bootstrap/tcp_bootstrap_rank.cpp backends/hw/bootstrap/tcp_bootstrap_root.cpp
      backends/hw/bootstrap/frame_connection.cpp
      backends/hw/bootstrap/tcp_socket.cpp
      backends/hw/cuda/zerobuf/window_handle.cpp backends/hw/cuda/zerobuf/window_layout.cpp
      backends/hw/cuda/zerobuf/peer_fd.cpp backends/hw/cuda/zerobuf/vmm_window.cpp
      backends/hw/cuda/zerobuf/communicator.cpp backends/hw/cuda/zerobuf/zerobuf_abi.cpp
      backends/hw/cuda/zerobuf/flag_kernels.cu backends/hw/cuda/zerobuf/fast_kernels.cu)
compile_flags() {  # nvcc's compile line, a word per line
  printf '%s\n' -std=c++20 -O2 -g "-I$root/backends/hw/cuda/standalone" "-I$root" \
    -gencode "arch=compute_${arch},code=[sm_${arch},compute_${arch}]" -Xcompiler -fPIC,-fvisibility=hidden,-pthread
}
# Kept objects are reused only with the same compiler and compile line: the CTest build check
# (tests/CMakeLists.txt) then recompiles what an edit touched, as make would, not all 27 sources
# (a minute and a half of nvcc on one core, every warm test run).
line="$("$nvcc" --version | tail -n1) $(compile_flags | tr '\n' ' ')"
if [[ "$(cat "$objs/compile-line" 2>/dev/null)" != "$line" ]]; then
  rm -f "$objs"/*.o "$objs"/*.d
  printf '%s\n' "$line" >"$objs/compile-line"
fi
# up_to_date OBJ DEP: the object exists and nothing nvcc -MD listed for it (the source and every
# header it read) is newer, or gone.
up_to_date() {
  [[ -f "$1" && -f "$2" ]] || return 1
  local f
  for f in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$2"); do
    [[ -e "$f" && ! "$f" -nt "$1" ]] || return 1
  done
}
compile() {
  local name obj flags
  mapfile -t flags < <(compile_flags)
  name="$(basename "$1")"
  obj="$objs/$name.o"
  up_to_date "$obj" "$objs/$name.d" && return 0
  "$nvcc" "${flags[@]}" -MD -MF "$objs/$name.d" -c "$root/$1" -o "$obj" >"$build/$name.log" 2>&1 \
    || { cat "$build/$name.log"; rm -f "$obj"; echo "compiling $1 failed"; return 1; }
}
export -f compile compile_flags up_to_date; export nvcc root build objs arch
printf '%s\n' "${srcs[@]}" | xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'compile {}' >"$out/build.log" 2>&1 \
  || { cat "$out/build.log"; die "build failed" 2; }
lib="$build/libzerobuf-railcheck.so"
# libcrypto (OpenSSL 3): the bootstrap's HMAC-SHA-256 (docs/security.md); by its soname, so only
# the runtime library (Ubuntu's libssl3) is needed to link, the headers (libssl-dev) to compile.
objects=()
for src in "${srcs[@]}"; do objects+=("$objs/$(basename "$src").o"); done
"$nvcc" -shared -o "$lib" "${objects[@]}" -lcuda -l:libcrypto.so.3 -Xlinker --no-undefined \
  -Xlinker "--version-script=$root/backends/hw/cuda/zerobuf/exports.map" >>"$out/build.log" 2>&1 \
  || { cat "$out/build.log"; die "linking libzerobuf-railcheck.so failed" 2; }
echo "built: $(basename "$lib") (sm_${arch} + compute_${arch} PTX)"
[[ -n "${LIB_OUT:-}" ]] && cp "$lib" "$LIB_OUT"
[[ "${BUILD_ONLY:-0}" == 1 ]] && exit 0

command -v nvidia-smi >/dev/null || die "no nvidia-smi: no GPU here" 77
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
echo "kernel $(uname -r)" | tee -a "$out/gpu.txt"

# NVLink multicast stays off (the lent machines' rule).
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
# Every rank's bootstrap authenticates with one job key (docs/security.md): a fresh one per run.
if [[ -z "${RAILCHECK_JOB_KEY_FILE:-}${RAILCHECK_JOB_KEY:-}${RAILCHECK_JOB_AUTH:-}" ]]; then
  (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$out/job.key")
  export RAILCHECK_JOB_KEY_FILE="$out/job.key"
fi
gpus=$(nvidia-smi -L | grep -c '^GPU')
echo "== two ranks on $( (( gpus >= 2 )) && echo "GPUs 0 and 1" || echo "GPU 0, shared")"
pids=()
for r in 0 1; do
  if (( gpus >= 2 )); then
    # One GPU each: NCCL sees one host and uses NVLink / P2P; this is the latency comparison.
    dev=$r; shared=(); hostid="zerobuf-host"
  else
    # Both on GPU 0: NCCL refuses two ranks on one GPU of one host, so each is its own "host"
    # (loopback sockets between them); the GPU time-slices between the processes.
    dev=0; shared=(--shared-gpu); hostid="zerobuf-rank-$r"
  fi
  NCCL_HOSTID="$hostid" timeout 420 python3 "$here/zerobuf_check.py" --rank "$r" --device "$dev" "${shared[@]}" \
    --lib "$lib" --max-bytes "$max_bytes" --out "$out/zerobuf_gpu.json" >"$out/rank$r.log" 2>&1 &
  pids+=($!)
done
set +e
wait "${pids[0]}"; rc0=$?
wait "${pids[1]}"; rc1=$?
set -e
echo "rank 0 exit $rc0, rank 1 exit $rc1 (137: killed by SIGKILL on purpose, the dead-peer check)"
sed -n '/^== zerobuf vs NCCL/,$p' "$out/rank0.log"
if [[ $rc0 != 0 ]]; then
  echo "== rank 0 log (tail)"; tail -n 40 "$out/rank0.log"
  echo "== rank 1 log (tail)"; tail -n 40 "$out/rank1.log"
  die "rank 0 failed (rc $rc0)"
fi
[[ $rc1 == 137 ]] || { tail -n 40 "$out/rank1.log"; die "rank 1 ended with $rc1, not by its own SIGKILL"; }
