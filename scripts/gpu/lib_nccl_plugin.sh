# shellcheck shell=bash
# What the GPU scripts that load the railcheck NCCL net plugin share (nccl_plugin_conformance.sh,
# nccl_tests_suite.sh): finding the plugin and its libraries, the SIGSEGV reporter, and the checks
# that NCCL's INFO log shows what a run claims to use. Sourced, never run; the caller has
# `set -euo pipefail`. Each function says what failed on stderr and returns 1; the caller decides
# whether that stops the script (conformance) or fails one run and goes on (the nccl-tests suite).

nccl_plugin_who="$(basename "$0" .sh)"  # names the script in messages, as its own die() does

# nccl_plugin_find ROOT: the plugin's .so (RAILCHECK_NCCL_PLUGIN_SO, else the first
# ROOT/build*/backends/hw/nccl/libnccl-net-railcheck.so) into NCCL_PLUGIN_SO; its folder and
# RAILCHECK_HWLIBS (the plugin's shared-library dependencies carried from the build machine,
# default ROOT/.hwlibs) go first on LD_LIBRARY_PATH, where NCCL's dlopen looks.
nccl_plugin_find() {
  local root="$1" so="${RAILCHECK_NCCL_PLUGIN_SO:-}"
  if [[ -z "$so" ]]; then
    so="$(ls -1 "$root"/build*/backends/hw/nccl/libnccl-net-railcheck.so 2>/dev/null | head -n1 || true)"
  fi
  if [[ -z "$so" || ! -f "$so" ]]; then
    echo "$nccl_plugin_who: plugin not found; set RAILCHECK_NCCL_PLUGIN_SO to libnccl-net-railcheck.so" >&2
    return 1
  fi
  # shellcheck disable=SC2034  # read by the caller
  NCCL_PLUGIN_SO="$so"
  local plugin_dir hwlibs="${RAILCHECK_HWLIBS:-$root/.hwlibs}"
  plugin_dir="$(cd "$(dirname "$so")" && pwd)"
  export LD_LIBRARY_PATH="$plugin_dir${hwlibs:+:$hwlibs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The plugin authenticates its control messages with the key every rank of a job shares
  # (docs/security.md): a fresh one per run unless the caller set one (or RAILCHECK_JOB_AUTH=off).
  if [[ -z "${RAILCHECK_JOB_KEY_FILE:-}${RAILCHECK_JOB_KEY:-}${RAILCHECK_JOB_AUTH:-}" ]]; then
    RAILCHECK_JOB_KEY_FILE="$(mktemp)"  # mode 600
    od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$RAILCHECK_JOB_KEY_FILE"
    export RAILCHECK_JOB_KEY_FILE
  fi
  # Every shared library the plugin needs must resolve, or NCCL silently falls back to Socket.
  nccl_plugin_deps_resolve "$so" "the plugin's" "$hwlibs" || return 1
  # libfabric is loaded by the plugin on first use (backends/hw/libfabric/libfabric_loader.cpp),
  # so ldd does not list it: look for it where that dlopen will, and check its own dependencies.
  local dir fabric=""
  local -a search
  IFS=: read -r -a search <<<"$LD_LIBRARY_PATH"
  for dir in "${search[@]}"; do
    if [[ -n "$dir" && -e "$dir/libfabric.so.1" ]]; then fabric="$dir/libfabric.so.1"; break; fi
  done
  [[ -z "$fabric" ]] && fabric="$(ldconfig -p 2>/dev/null | awk '$1 == "libfabric.so.1" {print $NF; exit}')"
  if [[ -z "$fabric" ]]; then
    echo "$nccl_plugin_who: libfabric.so.1 not found on LD_LIBRARY_PATH or in the system (put it in $hwlibs)" >&2
    return 1
  fi
  nccl_plugin_deps_resolve "$fabric" "libfabric's" "$hwlibs"
}

# nccl_plugin_deps_resolve LIB WHOSE HWLIBS: every shared library LIB needs is found (ldd), or
# says which are not and returns 1.
nccl_plugin_deps_resolve() {
  local lib="$1" whose="$2" hwlibs="$3" deps missing
  if ! deps="$(ldd "$lib" 2>&1)"; then
    echo "$nccl_plugin_who: ldd cannot read $lib: $deps" >&2
    return 1
  fi
  missing="$(awk '/not found/ {print $1}' <<<"$deps")"
  if [[ -n "$missing" ]]; then
    echo "$nccl_plugin_who: $whose dependencies are not found: $missing (put them in $hwlibs)" >&2
    return 1
  fi
}

# nccl_plugin_segv_preload DIR: prints the LD_PRELOAD library that reports where a SIGSEGV
# happened (RAILCHECK_SEGV_PRELOAD, else scripts/gpu/segv_report.c built into DIR where a C
# compiler exists; libpsm, loaded by libfabric, otherwise swallows the backtrace), or nothing
# (and a warning: a crash will then not say where).
nccl_plugin_segv_preload() {
  local dir="$1" src
  src="$(dirname "${BASH_SOURCE[0]}")/segv_report.c"
  if [[ -n "${RAILCHECK_SEGV_PRELOAD:-}" ]]; then
    echo "$RAILCHECK_SEGV_PRELOAD"
  elif command -v cc >/dev/null && cc -shared -fPIC -O1 -o "$dir/segv_report.so" "$src" -ldl; then
    echo "$dir/segv_report.so"
  else
    echo "$nccl_plugin_who: no segv_report.so (no C compiler, or it failed): a crash will not say where" >&2
  fi
}

# What NCCL's INFO log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET) must show, per kind of run:
# "pattern<TAB>what it proves", one a line. The plugin's own lines come through NCCL's logger
# (docs/nccl-plugin.md, "Fault injection").
nccl_plugin_log_checks() {  # plugin | failover | socket
  case "$1" in
    plugin) printf '%s\t%s\n' \
      "NET/Plugin: Loaded net plugin railcheck" "our plugin loaded" \
      "Using network railcheck" "our plugin in use" \
      "NET/railcheck railcheck0" "the plugin's device properties" ;;
    failover) printf '%s\t%s\n' \
      "Using network railcheck" "our plugin in use" \
      "fault injected" "the injected fault" \
      "failover [0-9]+ done" "a completed failover" ;;
    socket) printf '%s\t%s\n' "Using network Socket" "NCCL's Socket transport" ;;
    *) echo "$nccl_plugin_who: unknown kind of run '$1' (plugin, failover, socket)" >&2; return 1 ;;
  esac
}

# nccl_plugin_check_log LOG KIND...: prints one line per check of the KINDs that LOG fails
# ("NCCL's log does not show <what> (no line matching '<pattern>')"); returns 1 if any failed.
nccl_plugin_check_log() {
  local log="$1" kind pattern what checks bad=0
  shift
  for kind in "$@"; do
    checks="$(nccl_plugin_log_checks "$kind")" || return 1
    while IFS=$'\t' read -r pattern what; do
      if ! grep -q -E "$pattern" "$log"; then
        echo "NCCL's log does not show $what (no line matching '$pattern')"
        bad=1
      fi
    done <<<"$checks"
  done
  return "$bad"
}

# nccl_plugin_failovers_done LOG: how many "failover N done" lines LOG holds (both ends log one).
nccl_plugin_failovers_done() {
  grep -c -E "failover [0-9]+ done" "$1" || true
}
