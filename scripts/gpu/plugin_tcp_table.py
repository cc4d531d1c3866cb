#!/usr/bin/env python3
"""Issue 42's like-for-like table: the plugin on TCP (net or tcp;ofi_rxm) against NCCL's Socket
transport on the same TCP fabric, per nccl-tests op and size, from scripts/gpu/nccl_tests_suite.sh's nccl_tests.json.

  plugin_tcp_table.py --json OUT.json [--before BEFORE.json] [--extra NAME=CONFIG:FILE ...] AFTER.json [AFTER2.json ...]

Each AFTER file's runs give plugin_us (config plugin-tcp), fault_us (fault-tcp), socket_us (socket)
and shm_us (plugin-shm); --before's plugin-tcp runs give plugin_before_us (another build of the
plugin, run on the same machine); each --extra gives column NAME_us from FILE's runs of CONFIG (a
variant run with other settings, e.g. stage_off=plugin-tcp:stage-off.json). A time is the median over the passing runs of nccl-tests'
out-of-place time at that size (one process driving every GPU). `correct` is true when every run
of the row's configurations passed (exit 0, no wrong value, the log checks of the suite). Prints a
markdown table with the ratios plugin/Socket and fault/plugin (the issue's goals: <= 1.0, <= 1.2).
"""
import argparse
import json
import statistics
import sys

COLUMNS = {"plugin-tcp": "plugin_us", "fault-tcp": "fault_us", "socket": "socket_us", "plugin-shm": "shm_us"}


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs += [r for r in json.load(f)["runs"] if r.get("mode", "one-process") == "one-process"]
    return runs


def collect(runs, column_of, table, failed_ops):
    for r in runs:
        col = column_of.get(r["config"])
        if col is None:
            continue
        if r["status"] != "pass":  # a failed run may have printed no rows: its whole op is not correct
            failed_ops.add(r["op"])
            continue
        for row in r.get("rows") or []:
            if row.get("time_us_oop") is not None:
                table.setdefault((r["op"], row["bytes"]), {}).setdefault(col, []).append(row["time_us_oop"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("after", nargs="+")
    ap.add_argument("--before")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=CONFIG:FILE")
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    table, failed_ops = {}, set()
    collect(load(a.after), COLUMNS, table, failed_ops)
    if a.before:
        collect(load([a.before]), {"plugin-tcp": "plugin_before_us"}, table, failed_ops)
    extra_columns = []
    for e in a.extra:
        name, _, rest = e.partition("=")
        config, _, path = rest.partition(":")
        if not (name and config and path):
            ap.error(f"--extra {e}: expected NAME=CONFIG:FILE")
        collect(load([path]), {config: f"{name}_us"}, table, failed_ops)
        extra_columns.append(f"{name}_us")
    rows = []
    for (op, size) in sorted(table):
        cells = {c: round(statistics.median(v), 1) for c, v in table[(op, size)].items()}
        runs = {c: len(v) for c, v in table[(op, size)].items()}
        rows.append({"test": op, "bytes": size, **cells, "runs": runs, "correct": op not in failed_ops})
    with open(a.json, "w") as f:
        json.dump({"rows": rows}, f, indent=1)
    f = lambda r, k: "-" if r.get(k) is None else f"{r[k]:.1f}"
    q = lambda x, y: "-" if x is None or y is None else f"{x / y:.2f}"
    shown = [c for c in ["shm_us", "plugin_before_us"] + extra_columns if any(c in r for r in rows)]
    print("| test | bytes | Socket us | plugin tcp us | plugin/Socket | fault us | fault/plugin | "
          + "".join(f"{c[:-3].replace('_', ' ')} us | " for c in shown) + "correct |")
    print("|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(shown) + "---|")
    for r in rows:
        print(f"| {r['test']} | {r['bytes']} | {f(r, 'socket_us')} | {f(r, 'plugin_us')} | "
              f"{q(r.get('plugin_us'), r.get('socket_us'))} | {f(r, 'fault_us')} | "
              f"{q(r.get('fault_us'), r.get('plugin_us'))} | " + "".join(f"{f(r, c)} | " for c in shown)
              + f"{'yes' if r['correct'] else 'NO'} |")
    return 0 if rows and not failed_ops else 1


if __name__ == "__main__":
    sys.exit(main())
