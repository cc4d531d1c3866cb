#!/usr/bin/env bash
# NVIDIA's nccl-tests as the railcheck NCCL net plugin's GPU suite (issue 33 item 3).
#
# Builds nccl-tests from the checkout NCCL_TESTS_DIR points to (never vendored) against the NCCL
# on this machine, then runs every *_perf it built with its data check on (-c 1) under each
# configuration, with NCCL's network transport carrying all traffic between the GPUs
# (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0):
#   plugin-shm, plugin-tcp   NCCL_NET_PLUGIN=railcheck, HA_NCCL_PROVIDER shm / tcp;ofi_rxm
#   fault-shm, fault-tcp     the same with RAILCHECK_NCCL_FAULT: every send comm cuts its primary
#   socket                   NCCL_NET=Socket, no plugin: the busbw reference
# in each launch mode: one-process (one process drives every GPU, -g <gpus>: NCCL's proxy threads
# call the plugin concurrently) and, where mpirun exists, per-gpu (mpirun -np <gpus>, -g 1).
# With one GPU, one-process has a single rank and sends nothing over the network: only per-gpu
# runs, two ranks on the GPU, each its own NCCL_HOSTID so NCCL takes them for two hosts.
#
# A run passes when it exits 0, nccl-tests' rows and footer show no wrong value, and NCCL's INFO log
# shows the plugin loaded and in use and, with the fault, the fault injected and a failover done
# (scripts/gpu/lib_nccl_plugin.sh, shared with nccl_plugin_conformance.sh). A crash, a timeout or a
# failed check fails that run, with its log tail, and the suite goes on; it exits 1 at the end if
# any run failed. Output in OUT: table.txt, nccl_tests.json (every run), and where runs failed,
# failures.txt (their tails) and logs.tar.gz (their full logs).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: NCCL_TESTS_DIR=<nccl-tests checkout> scripts/gpu/nccl_tests_suite.sh [--help]

Environment (defaults in brackets):
  NCCL_TESTS_DIR     nccl-tests source checkout (required; e.g. v2.19.6)
  OUT                results: table.txt, nccl_tests.json, failures.txt, logs.tar.gz [./nccl-tests-out]
  BUILD_DIR          nccl-tests builds (reused while binaries exist), run logs [<repo>/build-nccl-tests]
  FORCE_BUILD        1: rebuild nccl-tests even where binaries exist [0]
  CUDA_HOME          [/usr/local/cuda]
  NCCL_HOME          NCCL with include/nccl.h and lib/libnccl.so[.2] [the pip package nvidia.nccl, else /usr]
  NVCC_GENCODE       [-gencode=arch=compute_90,code=sm_90]
  MPI                auto, 0 or 1: build and run the per-gpu mode with mpirun [auto: where mpirun exists]
  MPI_HOME           MPI with include/mpi.h [from mpicc]
  MPIRUN_ARGS        extra mpirun arguments []
  NGPUS              GPUs to use [all that nvidia-smi lists]
  OPS                which *_perf, without _perf [every one built]
  CONFIGS            of plugin-shm plugin-tcp fault-shm fault-tcp socket [all]
  MODES              of one-process per-gpu [both where possible]
  REPEAT             runs of each op x config x mode, repeats interleaved [1]
  MIN_BYTES MAX_BYTES STEP_FACTOR ITERS WARMUP_ITERS CHECK_ITERS   nccl-tests' -b -e -f -n -w -c [8 64M 8 20 5 1]
  RAILCHECK_NCCL_FAULT   the fault of fault-* [cut-primary-after-msgs=N, N half the collectives a run issues]
  HA_NCCL_RAIL_ADDRS     [127.0.0.1]
  HA_NCCL_CONTROL_TIMEOUT_MS   for tcp;ofi_rxm, which opens a rail's connection on first use [2000]
  TCP_PROVIDER       the libfabric provider of the *-tcp configs: auto (the plugin's default: net where
                     libfabric has it, else tcp;ofi_rxm; the log says which), tcp;ofi_rxm (also spelled
                     rxm, which fits plugin_tcp_perf.sh's ';'-separated VARIANTS), or net (RDM over TCP
                     without ofi_rxm) [auto]
  RUN_TIMEOUT        seconds one run may take [300]
  SUITE_DEADLINE     seconds after the start past which no run starts; those left fail the table [none]
  PREVIOUS_JSON      nccl_tests.json files of earlier calls whose runs join this table []
  KEEP_LOGS          1: logs.tar.gz holds every run's logs, not only the failed ones' [0]
  RAILCHECK_NCCL_PLUGIN_SO RAILCHECK_HWLIBS RAILCHECK_SEGV_PRELOAD   as for nccl_plugin_conformance.sh

Examples:
  the full table:   NCCL_TESTS_DIR=$PWD/build-nccl-tests-src scripts/gpu/nccl_tests_suite.sh
  100 runs each of sendrecv and alltoall with the fault on tcp, one process:
    REPEAT=100 OPS="sendrecv alltoall" CONFIGS=fault-tcp MODES=one-process \
      NCCL_TESTS_DIR=... scripts/gpu/nccl_tests_suite.sh
EOF
}
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) usage >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
die() { echo "nccl_tests_suite: $*" >&2; exit 1; }
say() { echo "nccl_tests_suite: $*" >&2; }
source "$here/lib_nccl_plugin.sh"

# --- what to run, checked before anything is built -------------------------------------------
all_configs="plugin-shm plugin-tcp fault-shm fault-tcp socket"
read -r -a configs <<<"${CONFIGS:-$all_configs}"
for c in "${configs[@]}"; do [[ " $all_configs " == *" $c "* ]] || die "CONFIGS: unknown '$c' ($all_configs)"; done
read -r -a modes <<<"${MODES:-one-process per-gpu}"
for m in "${modes[@]}"; do [[ "$m" == one-process || "$m" == per-gpu ]] || die "MODES: unknown '$m' (one-process per-gpu)"; done
repeat="${REPEAT:-1}"
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "REPEAT: '$repeat' is not a positive count"
run_timeout="${RUN_TIMEOUT:-300}"
[[ "$run_timeout" =~ ^[1-9][0-9]*$ ]] || die "RUN_TIMEOUT: '$run_timeout' is not a positive count of seconds"
suite_deadline="${SUITE_DEADLINE:-}"
[[ -z "$suite_deadline" || "$suite_deadline" =~ ^[1-9][0-9]*$ ]] || die "SUITE_DEADLINE: '$suite_deadline' is not seconds"

bytes() {  # nccl-tests' size syntax (src/common.cu parsesize): a count, or with K, M, G (binary)
  [[ "$1" =~ ^([0-9]+)([KMGkmg]?)$ ]] || die "size '$1' is not N, NK, NM or NG"
  local n="${BASH_REMATCH[1]}"
  case "${BASH_REMATCH[2]}" in K|k) n=$((n << 10)) ;; M|m) n=$((n << 20)) ;; G|g) n=$((n << 30)) ;; esac
  echo "$n"
}
min_bytes="${MIN_BYTES:-8}"; max_bytes="${MAX_BYTES:-64M}"
min_b="$(bytes "$min_bytes")"; max_b="$(bytes "$max_bytes")"
factor="${STEP_FACTOR:-8}"; iters="${ITERS:-20}"; warmup="${WARMUP_ITERS:-5}"; check="${CHECK_ITERS:-1}"
for v in factor iters warmup check; do [[ "${!v}" =~ ^[0-9]+$ ]] || die "${v^^}: '${!v}' is not a count"; done
((min_b > 0 && min_b <= max_b && factor >= 2)) || die "need 0 < MIN_BYTES <= MAX_BYTES and STEP_FACTOR >= 2"
((check >= 1)) || die "CHECK_ITERS must be >= 1: the suite is about wrong values"
# What one run issues per rank (src/common.cu TimeTest, BenchTime): warmup iterations at every
# power-of-two size, then per stepped size, out-of-place and in-place, one sync collective, the
# timed iterations and the checked ones. Each puts at least one message on channel 0's send comm,
# so a fault after half of them fires mid-run.
rows=0; collectives=0
for ((s = min_b; s <= max_b; s *= 2)); do collectives=$((collectives + warmup)); done
for ((s = min_b; s <= max_b; s *= factor)); do rows=$((rows + 1)); collectives=$((collectives + 2 * (1 + iters + check))); done
fault="${RAILCHECK_NCCL_FAULT:-cut-primary-after-msgs=$((collectives / 2))}"
perf_args=(-b "$min_bytes" -e "$max_bytes" -f "$factor" -n "$iters" -w "$warmup" -c "$check")
previous=()  # they must have run with these args and fault (nccl_tests_table.py checks)
for p in ${PREVIOUS_JSON:-}; do [[ -f "$p" ]] || die "PREVIOUS_JSON: no file $p"; previous+=("$(realpath "$p")"); done

# --- the machine ------------------------------------------------------------------------------
[[ -n "${NCCL_TESTS_DIR:-}" ]] || { usage >&2; die "set NCCL_TESTS_DIR to an nccl-tests checkout"; }
[[ -f "$NCCL_TESTS_DIR/src/common.cu" && -f "$NCCL_TESTS_DIR/Makefile" ]] ||
  die "NCCL_TESTS_DIR=$NCCL_TESTS_DIR is not an nccl-tests checkout (no src/common.cu, Makefile)"
nt_src="$(cd "$NCCL_TESTS_DIR" && pwd)"
nt_version="$(sed -n 's/^#define NCCL_TESTS_VERSION "\(.*\)"/\1/p' "$nt_src/src/common.h")"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
[[ -x "$cuda_home/bin/nvcc" ]] || die "no nvcc in CUDA_HOME=$cuda_home"
command -v nvidia-smi >/dev/null || die "no nvidia-smi: is this a GPU machine?"
if [[ -n "${NGPUS:-}" ]]; then
  gpus="$NGPUS"
elif [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
  gpus="$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)"
else
  gpus="$(nvidia-smi -L | grep -c '^GPU ')" || true
fi
[[ "$gpus" =~ ^[1-9][0-9]*$ ]] || die "no GPU found (nvidia-smi -L; or set NGPUS)"
gpu_name="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1)"

out="${OUT:-$PWD/nccl-tests-out}"
build="${BUILD_DIR:-$root/build-nccl-tests}"
mkdir -p "$out" "$build"
build="$(cd "$build" && pwd)"
rm -f "$out/table.txt" "$out/nccl_tests.json" "$out/failures.txt" "$out/logs.tar.gz"

# NCCL: NCCL_HOME, else the pip package (PyTorch's NCCL), else the system's. nccl-tests links
# -lnccl, so a lib/ holding only libnccl.so.2 (the pip package) gets a folder of links beside it.
nccl_home="${NCCL_HOME:-}"
if [[ -z "$nccl_home" ]]; then
  nccl_home="$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)" || nccl_home=/usr
fi
[[ -f "$nccl_home/include/nccl.h" ]] || die "no include/nccl.h under NCCL_HOME=$nccl_home"
nccl_so=""
for d in lib lib64 lib/x86_64-linux-gnu; do
  for f in libnccl.so.2 libnccl.so; do
    [[ -z "$nccl_so" && -e "$nccl_home/$d/$f" ]] && nccl_so="$nccl_home/$d/$f"
  done
done
[[ -n "$nccl_so" ]] || die "no libnccl.so[.2] in lib/, lib64/ or lib/x86_64-linux-gnu/ of NCCL_HOME=$nccl_home"
nccl_link="$build/nccl-home"  # what nccl-tests' Makefile wants: include/, and lib/libnccl.so
mkdir -p "$nccl_link/lib"
ln -sfn "$nccl_home/include" "$nccl_link/include"
ln -sf "$nccl_so" "$nccl_link/lib/libnccl.so"
ln -sf "$nccl_so" "$nccl_link/lib/libnccl.so.2"

# MPI: the per-gpu mode needs mpirun, and nccl-tests built with MPI=1 against its mpi.h.
mpi="${MPI:-auto}"
[[ "$mpi" == auto ]] && { command -v mpirun >/dev/null && mpi=1 || mpi=0; }
[[ "$mpi" == 0 || "$mpi" == 1 ]] || die "MPI: '$mpi' is not auto, 0 or 1"
mpi_home="${MPI_HOME:-}"
if [[ "$mpi" == 1 ]]; then
  command -v mpirun >/dev/null || die "MPI=1 but no mpirun on PATH"
  if [[ -z "$mpi_home" ]]; then  # Open MPI names its include folder; others sit under bin/..
    inc="$(mpicc --showme:incdirs 2>/dev/null | awk '{print $1}')" || true
    if [[ -n "$inc" ]]; then mpi_home="$(dirname "$inc")"; else mpi_home="$(dirname "$(dirname "$(command -v mpirun)")")"; fi
  fi
  [[ -f "$mpi_home/include/mpi.h" ]] || die "no include/mpi.h under MPI_HOME=$mpi_home (set MPI_HOME, or MPI=0)"
fi
launchable_modes=()
for m in "${modes[@]}"; do
  if [[ "$m" == one-process && "$gpus" -lt 2 ]]; then
    say "1 GPU: skipping one-process (a single rank sends nothing over the network)"
  elif [[ "$m" == per-gpu && "$mpi" == 0 ]]; then
    say "no MPI (mpirun, or MPI=0): skipping per-gpu"
  else
    launchable_modes+=("$m")
  fi
done
((${#launchable_modes[@]})) ||
  die "nothing to run: one process needs 2 GPUs, and one GPU needs mpirun to put two ranks on it ($gpus GPU, MPI=$mpi)"

# --- build nccl-tests (once per source, NCCL, gencode and MPI setting) -------------------------
gencode="${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}"
build_nccl_tests() {  # MPI setting (0|1): prints the folder of its *_perf
  local dir="$build/mpi$1" stamp
  stamp="nccl-tests $nt_version at $nt_src; NCCL $nccl_home; $gencode; MPI=$1 ${mpi_home}"
  if [[ "${FORCE_BUILD:-0}" != 1 && -f "$dir/stamp" && "$(cat "$dir/stamp")" == "$stamp" ]] &&
      compgen -G "$dir/*_perf" >/dev/null; then
    echo "$dir"; return
  fi
  rm -rf "$dir"; mkdir -p "$dir"
  say "building nccl-tests $nt_version (MPI=$1, $gencode) into $dir"
  local start=$SECONDS mpi_args=(MPI="$1")
  [[ "$1" == 1 ]] && mpi_args+=(MPI_HOME="$mpi_home")
  if ! make -C "$nt_src" -j "$(nproc)" "${mpi_args[@]}" CUDA_HOME="$cuda_home" NCCL_HOME="$nccl_link" \
      NVCC_GENCODE="$gencode" BUILDDIR="$dir" >"$build/build-mpi$1.log" 2>&1; then
    tail -n 30 "$build/build-mpi$1.log" >&2
    die "building nccl-tests failed (log: $build/build-mpi$1.log)"
  fi
  echo "$stamp" >"$dir/stamp"
  say "built in $((SECONDS - start)) s"
  echo "$dir"
}
declare -A bin_dir
for m in "${launchable_modes[@]}"; do
  if [[ "$m" == one-process ]]; then bin_dir[$m]="$(build_nccl_tests 0)"; else bin_dir[$m]="$(build_nccl_tests 1)"; fi
done
built_ops="$(cd "${bin_dir[$m]}" && for b in ./*_perf; do b="${b#./}"; echo -n "${b%_perf} "; done)"
read -r -a ops <<<"${OPS:-$built_ops}"
for o in "${ops[@]}"; do [[ " $built_ops " == *" $o "* ]] || die "OPS: no ${o}_perf was built ($built_ops)"; done

# --- the plugin and what every run shares -------------------------------------------------------
needs_plugin=0
for c in "${configs[@]}"; do [[ "$c" == socket ]] || needs_plugin=1; done
[[ "$needs_plugin" == 1 ]] && { nccl_plugin_find "$root" || exit 1; }
export LD_LIBRARY_PATH="$nccl_link/lib:$cuda_home/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
segv="$(nccl_plugin_segv_preload "$build")"
# One folder per invocation: several suites may share BUILD_DIR (its nccl-tests binaries) and run
# side by side, e.g. streams of REPEAT runs on a machine with cores to spare.
work="$build/runs.$$"
rm -rf "$work"; mkdir -p "$work"
jsonl="$work/runs.jsonl"

common=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
        HA_NCCL_RAIL_ADDRS="${HA_NCCL_RAIL_ADDRS:-127.0.0.1}" LD_LIBRARY_PATH="$LD_LIBRARY_PATH")
# Preloaded into nccl-tests only: timeout and mpirun re-raise a rank's signal, and would report it too.
preload=(env)
[[ -n "$segv" ]] && preload=(env LD_PRELOAD="$segv")
config_env() {  # config: its variables, one a line
  local provider=shm
  case "$1" in
    socket) echo NCCL_NET=Socket; return ;;
    *-tcp) provider="${TCP_PROVIDER:-auto}"; [[ "$provider" == rxm ]] && provider="tcp;ofi_rxm"; echo "HA_NCCL_CONTROL_TIMEOUT_MS=${HA_NCCL_CONTROL_TIMEOUT_MS:-2000}" ;;
  esac
  echo NCCL_NET_PLUGIN=railcheck
  echo "HA_NCCL_PROVIDER=$provider"
  [[ "$1" == fault-* ]] && echo "RAILCHECK_NCCL_FAULT=$fault"
  return 0
}
config_checks() {  # config: the kinds of lib_nccl_plugin.sh's log checks
  case "$1" in socket) echo socket ;; fault-*) echo plugin failover ;; *) echo plugin ;; esac
}
open_mpi=0
[[ "$mpi" == 1 ]] && mpirun --version 2>&1 | grep -qi "open mpi" && open_mpi=1

# One run: op, config, mode, rep. Records its verdict; never stops the suite.
run_one() {
  local op="$1" config="$2" mode="$3" rep="$4"
  local dir="$work/$op.$config.$mode.$rep" vars=() cmd=() v
  mkdir -p "$dir"
  mapfile -t vars < <(config_env "$config")
  vars=("${common[@]}" "${vars[@]}" NCCL_DEBUG_FILE="$dir/nccl.%h.%p.log")
  local bin="${bin_dir[$mode]}/${op}_perf"
  if [[ "$mode" == one-process ]]; then
    cmd=("${preload[@]}" "$bin" -g "$gpus" "${perf_args[@]}")
  else
    local np="$gpus" rank_env=()
    if [[ "$gpus" == 1 ]]; then  # two ranks on GPU 0, one NCCL_HOSTID each (nccl_ops_check.py --one-gpu)
      np=2; vars+=(NCCL_TESTS_DEVICE=0)
      rank_env=(bash -c 'export NCCL_HOSTID=railcheck-rank${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; exec "$@"' rank)
    fi
    cmd=(mpirun -np "$np")
    if [[ "$open_mpi" == 1 ]]; then  # Open MPI passes a variable to the ranks only when asked
      cmd+=(--bind-to none)
      [[ "$EUID" == 0 ]] && cmd+=(--allow-run-as-root)
      for v in "${vars[@]}"; do cmd+=(-x "${v%%=*}"); done
    fi
    # shellcheck disable=SC2206  # MPIRUN_ARGS is a list of words by design
    cmd+=(${MPIRUN_ARGS:-} "${rank_env[@]}" "${preload[@]}" "$bin" -g 1 "${perf_args[@]}")
  fi
  printf '%q ' env -u NCCL_NET -u NCCL_NET_PLUGIN -u RAILCHECK_NCCL_FAULT "${vars[@]}" "${cmd[@]}" >"$dir/command"
  local start=$SECONDS rc=0
  env -u NCCL_NET -u NCCL_NET_PLUGIN -u RAILCHECK_NCCL_FAULT "${vars[@]}" \
    timeout -k 10 "$run_timeout" "${cmd[@]}" >"$dir/stdout" 2>"$dir/stderr" </dev/null || rc=$?
  local seconds=$((SECONDS - start)) timed_out=0
  [[ "$rc" == 124 || ("$rc" == 137 && "$seconds" -ge "$run_timeout") ]] && timed_out=1
  cat "$dir/stdout" "$dir/stderr" "$dir"/nccl.*.log >"$dir/all.log" 2>/dev/null || true
  local missing=() line kinds
  kinds="$(config_checks "$config")"
  # shellcheck disable=SC2086  # kinds is a list of words
  while IFS= read -r line; do [[ -n "$line" ]] && missing+=(--missing-check "$line"); done \
    < <(nccl_plugin_check_log "$dir/all.log" $kinds || true)
  local logs=()
  for v in "$dir"/nccl.*.log; do [[ -e "$v" ]] && logs+=(--nccl-log "$v"); done
  local verdict
  verdict="$(python3 "$here/nccl_tests_table.py" record --jsonl "$jsonl" --op "$op" --config "$config" \
    --mode "$mode" --rep "$rep" --rc "$rc" --timed-out "$timed_out" --seconds "$seconds" \
    --stdout "$dir/stdout" --stderr "$dir/stderr" "${logs[@]}" "${missing[@]}" \
    --failovers "$(nccl_plugin_failovers_done "$dir/all.log")" --expect-rows "$rows")" ||
    die "scripts/gpu/nccl_tests_table.py could not read the run in $dir"
  rm -f "$dir/all.log"
  say "[$run_no/$total] $op $config $mode rep $rep: $verdict ($seconds s)"
  if [[ "$verdict" == pass ]]; then
    [[ "${KEEP_LOGS:-0}" == 1 ]] || rm -rf "$dir"
  else
    { echo "--- stderr tail"; tail -n 20 "$dir/stderr"; echo "--- stdout tail"; tail -n 10 "$dir/stdout"; } >&2
  fi
}

total=$((repeat * ${#ops[@]} * ${#configs[@]} * ${#launchable_modes[@]}))
say "nccl-tests $nt_version, NCCL at $nccl_home, $gpus x $gpu_name; $total runs: ops '${ops[*]}'," \
  "configs '${configs[*]}', modes '${launchable_modes[*]}', $repeat x; ${perf_args[*]}; fault '$fault'" \
  "(a run issues >= $collectives collectives per rank); $run_timeout s per run"
run_no=0
for rep in $(seq "$repeat"); do
  for op in "${ops[@]}"; do for config in "${configs[@]}"; do for mode in "${launchable_modes[@]}"; do
    run_no=$((run_no + 1))
    if [[ -n "$suite_deadline" && "$SECONDS" -ge "$suite_deadline" ]]; then
      python3 "$here/nccl_tests_table.py" record --jsonl "$jsonl" --op "$op" --config "$config" \
        --mode "$mode" --rep "$rep" --not-run "SUITE_DEADLINE ($suite_deadline s) passed first"
      continue
    fi
    run_one "$op" "$config" "$mode" "$rep"
  done; done; done
done

# --- the table, the JSON, the failed runs' logs ------------------------------------------------
status=0
python3 "$here/nccl_tests_table.py" table --json "$out/nccl_tests.json" --failures "$out/failures.txt" \
  --meta "date=$(date -u +%Y-%m-%dT%H:%MZ)" --meta "host=$(hostname)" --meta "gpu=$gpu_name" \
  --meta "gpus=$gpus" --meta "nccl_tests=$nt_version" --meta "nccl_home=$nccl_home" \
  --meta "args=${perf_args[*]}" --meta "fault=$fault" --meta "plugin=${NCCL_PLUGIN_SO:-none}" \
  --meta "plugin_built=$([[ -n "${NCCL_PLUGIN_SO:-}" ]] && date -u -r "$NCCL_PLUGIN_SO" +%Y-%m-%dT%H:%MZ || echo -)" \
  "$jsonl" "${previous[@]}" | tee "$out/table.txt" || status=1
if compgen -G "$work/*/stdout" >/dev/null; then
  tar -czf "$out/logs.tar.gz" -C "$work" --exclude=runs.jsonl .
  if (($(stat -c %s "$out/logs.tar.gz") >= 16 << 20)); then
    rm -f "$out/logs.tar.gz"; say "logs over 16 MiB: left in $work, not in OUT"
  fi
fi
if [[ "$status" == 0 ]]; then say "every run passed; table and JSON in $out"; else say "some runs failed: see $out/failures.txt"; fi
exit "$status"
