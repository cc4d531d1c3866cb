#!/usr/bin/env bash
# A fuzz campaign: every libFuzzer target at once, each on its own core(s), on this machine or on
# one with more cores that has no build tools (the device machine). docs/fuzzing.md, "Campaigns".
#
#   scripts/fuzz_campaign.sh pack BUILD_FUZZ TARBALL     # the targets and the shared libraries they
#                                                        # need beyond glibc/libstdc++, in one file
#   scripts/fuzz_campaign.sh run TARBALL|BUILD_FUZZ SECS [OUT]
#
# `run` prints fuzz/run.sh's line per target (executions, clean or FOUND) and the corpus sizes,
# and leaves each target's log tail and any finding under OUT (default $OUT, else ./fuzz-campaign).
# Five targets whose inputs are larger get two fork jobs each: 16 processes in all.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
targets=(fuzz_groundtruth fuzz_scenario fuzz_check_spec fuzz_trace fuzz_sweep_spec fuzz_route_spec
         fuzz_nccl_log fuzz_sched_trace fuzz_sched_scenario fuzz_wire_codecs fuzz_text_fields)
declare -A jobs=([fuzz_trace]=2 [fuzz_nccl_log]=2 [fuzz_check_spec]=2 [fuzz_scenario]=2 [fuzz_groundtruth]=2)

usage() { sed -n 2,10p "$0" >&2; exit 2; }

case "${1:-}" in
  pack)
    [ $# -eq 3 ] || usage
    build=$2 tarball=$3
    stage=$(mktemp -d)
    mkdir -p "$stage/fuzz" "$stage/lib"
    for t in "${targets[@]}"; do
      [ -x "$build/fuzz/$t" ] || { echo "missing $build/fuzz/$t (build the railcheck_fuzz target)" >&2; exit 2; }
      cp "$build/fuzz/$t" "$stage/fuzz/"
    done
    # glibc and libstdc++ of the target machine are newer and compatible; everything else travels.
    ldd "$stage"/fuzz/* | awk '/=>/ {print $3}' | sort -u |
      grep -v -E '/(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt)\.so' |
      while read -r lib; do cp -L "$lib" "$stage/lib/"; done
    tar cJf "$tarball" -C "$stage" fuzz lib
    rm -rf "$stage"
    ls -l "$tarball"
    ;;
  run)
    [ $# -ge 3 ] || usage
    from=$2 secs=$3 out=${4:-${OUT:-$PWD/fuzz-campaign}}
    work=$(mktemp -d)
    if [ -f "$from" ]; then
      tar xJf "$from" -C "$work"
      export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      build=$work
    else
      build=$from
    fi
    echo "fuzz campaign: ${#targets[@]} targets, ${secs} s each, $(nproc) cores, started $(date -u +%FT%TZ)"
    for t in "${targets[@]}"; do
      ( KEEP_GOING=1 FUZZ_TARGETS=$t "$src/fuzz/run.sh" "$build" "$secs" "$work/runs/$t" "${jobs[$t]:-1}" \
          >"$work/$t.out" 2>&1 || true ) &
    done
    wait
    echo "finished $(date -u +%FT%TZ)"
    mkdir -p "$out/logs"
    found=0
    for t in "${targets[@]}"; do
      tail -1 "$work/$t.out"
      tail -c 100000 "$work/runs/$t/$t.log" >"$out/logs/$t.log" 2>/dev/null || true
      if [ -n "$(ls "$work/runs/$t/artifacts/$t" 2>/dev/null)" ]; then
        mkdir -p "$out/artifacts/$t"
        cp "$work/runs/$t/artifacts/$t"/* "$out/artifacts/$t/"
        found=1
      fi
      echo "  corpus of $t: $(ls "$work/runs/$t/corpus/$t" | wc -l) inputs"
    done
    rm -rf "$work"
    exit $found
    ;;
  *) usage ;;
esac
