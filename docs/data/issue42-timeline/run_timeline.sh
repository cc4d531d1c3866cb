#!/bin/sh
# Issue 42: one traced run of bench/nccl_plugin_overhead (--quick, one size) and its timeline.
# usage: run_timeline.sh BUILD_DIR SIZE OUT.md
# BUILD_DIR must hold a build with timeline.patch applied (README.md). The patched backend writes
# one trace per connection pair to /tmp/h42/ when H42_TRACE is set.
set -e
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/h42
rm -f /tmp/h42/trace.*
H42_TRACE=1 "$1"/bench/nccl_plugin_overhead --quick --size "$2" | grep '^| tcp' > "$3"
# The bare pair's trace is the smaller of the two (the plugin's holds its spinning tests).
bare=$(ls -S /tmp/h42/trace.*.1 | tail -1)
plug=$(ls -S /tmp/h42/trace.*.1 | head -1)
[ "$bare" != "$plug" ] || { echo "run_timeline.sh: one trace only" >&2; exit 1; }
python3 "$here/timeline.py" "$bare" "$plug" >> "$3"
cat "$3"
