#!/usr/bin/env python3
"""Reads NVIDIA nccl-tests runs for scripts/gpu/nccl_tests_suite.sh: one verdict per run, then the
table per op x config x launch mode.

  record --jsonl F --op OP --config CFG --mode MODE --rep N --rc RC --timed-out 0|1
         --seconds S --stdout F --stderr F [--nccl-log F ...] --failovers N
         --expect-rows N [--missing-check MSG ...]
      parses one run and appends its record to F (JSON lines); prints the verdict
      ("pass", or "<status>: <why>") for the suite's progress line.
  record --jsonl F --op OP --config CFG --mode MODE --rep N --not-run WHY
      records a run the suite did not start (its deadline had passed), which fails the table.
  table --json OUT.json [--failures F] [--meta KEY=VALUE ...] INPUT...
      INPUTs are JSON-lines files from `record` or earlier OUT.json files (runs are merged, so
      repeats split over several calls make one table; an earlier call's not-run entries are
      left out); prints the table, writes OUT.json;
      exit 1 if any run failed.

The output format read here is nccl-tests 2.19.6's (src/util.cu): a data row is
"%12li  %12li  %8s  %6s  %6s" (size, count, type, redop, root) then, out-of-place and in-place,
"  %7s  %6s  %6s  %6g" (time, algbw, busbw, #wrong; "N/A" without -c); the footer is
"# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth    : X". nccl-tests prints
rows from rank 0 only, on stdout; the suite sends NCCL's INFO log to its own files
(NCCL_DEBUG_FILE), since a proxy thread's line written between a row's two halves would split it.
"""
import argparse
import json
import re
import signal
import sys
from collections import Counter

STATUSES = ("pass", "wrong", "crash", "timeout", "error", "log-check", "not-run")

_FOOTER_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)")
_FOOTER_BW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_VERSION = re.compile(r"^# nccl-tests version (\S+) nccl-headers=(\d+) nccl-library=(\d+)")
_RANK = re.compile(r"^#\s+Rank\s+\d+\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+\S+\s+device\s+\d+\s+\[[^\]]*\]\s+(.*\S)")
# nccl-tests' own failure lines (src/common.h: TESTCHECK, NCCLCHECK, CUDACHECK, the timeout).
_TEST_FAILURE = re.compile(r"Test (NCCL |CUDA )?failure|Test timeout|Invalid number of GPUs")
# What a crashed process leaves on stderr: scripts/gpu/segv_report.c, glibc's heap checks and
# abort, the shell's and Open MPI's reports of a rank killed by a signal, C++ terminate.
_CRASH = re.compile(
    r"SEGV_REPORT|corrupted size|corrupted double-linked|double free|free\(\): |malloc\(\): |"
    r"malloc_consolidate|Segmentation fault|\*\*\* Process received signal|exited on signal|"
    r"terminate called|Aborted \(core dumped\)")
_TAIL_LINES = 40
_LINE_CHARS = 300


def _number(text):
    """A field as nccl-tests prints it (%g or a fixed width float); None for N/A."""
    try:
        return float(text)
    except ValueError:
        return None


def parse_row(line):
    """One data row as a dict, or None if the line is not a complete row. The two halves are the
    last 8 fields: read from the end, since a test without a reduction (hypercube) prints its
    redop as an empty %6s, which leaves 12 fields, not 13."""
    f = line.split()
    if len(f) not in (12, 13) or not (f[0].isdigit() and f[1].isdigit()):
        return None
    head, tail = f[:-8], f[-8:]
    halves = []
    for at in (0, 4):
        time_us, algbw, busbw, wrong = (_number(x) for x in tail[at:at + 4])
        if time_us is None or busbw is None:
            return None
        halves.append({"time_us": time_us, "algbw": algbw, "busbw": busbw,
                       "wrong": None if wrong is None else int(wrong)})
    return {"bytes": int(head[0]), "count": int(head[1]), "type": head[2],
            "redop": head[3] if len(head) == 5 else "", "root": head[-1],
            "out_of_place": halves[0], "in_place": halves[1]}


def parse_output(text):
    """nccl-tests' stdout: rows, footer, versions, devices, and its own failure lines."""
    out = {"rows": [], "out_of_bounds": None, "out_of_bounds_ok": None, "avg_busbw": None,
           "nccl_tests": None, "nccl_library": None, "devices": [], "test_failures": [],
           "unparsed_rows": 0}
    for line in text.splitlines():
        if line.startswith("#"):
            if m := _FOOTER_OOB.match(line):
                out["out_of_bounds"], out["out_of_bounds_ok"] = int(m[1]), m[2] == "OK"
            elif m := _FOOTER_BW.match(line):
                out["avg_busbw"] = _number(m[1])
            elif m := _VERSION.match(line):
                out["nccl_tests"], out["nccl_library"] = m[1], int(m[3])
            elif m := _RANK.match(line):
                out["devices"].append(m[1])
            continue
        if _TEST_FAILURE.search(line):
            out["test_failures"].append(line.strip()[:_LINE_CHARS])
        elif line[:12].strip().isdigit():
            row = parse_row(line)
            if row:
                out["rows"].append(row)
            else:  # a row cut short (a crash) or split by another writer
                out["unparsed_rows"] += 1
    return out


def wrong_values(parsed):
    """Sum of the #wrong columns; None when no row reports them (run without -c)."""
    counts = [h["wrong"] for r in parsed["rows"] for h in (r["out_of_place"], r["in_place"])
              if h["wrong"] is not None]
    return sum(counts) if counts else None


def crash_lines(texts):
    return [ln.strip()[:_LINE_CHARS] for t in texts for ln in t.splitlines() if _CRASH.search(ln)]


def verdict(rc, timed_out, parsed, crashes, missing_checks, expect_rows):
    """(status, why): the first of crash, timeout, wrong, error, log-check that applies. A crash
    report outranks the deadline: with one rank dead, the others may wait for it until killed."""
    if crashes or (rc > 128 and not timed_out):
        sig = ""
        if rc > 128 and not timed_out:
            try:
                sig = f"{signal.Signals(rc - 128).name}, "
            except ValueError:
                sig = f"signal {rc - 128}, "
        first = crashes[0] if crashes else "no crash report on stderr"
        return "crash", f"{sig}exit {rc}{', at the deadline' if timed_out else ''}: {first}"
    if timed_out:
        return "timeout", f"still running at the deadline (exit {rc})"
    wrong = wrong_values(parsed)
    if wrong or parsed["out_of_bounds"]:
        return "wrong", f"{wrong or 0} wrong values, out of bounds {parsed['out_of_bounds']}"
    if rc != 0:
        first = parsed["test_failures"][0] if parsed["test_failures"] else "no nccl-tests failure line"
        return "error", f"exit {rc}: {first}"
    if parsed["out_of_bounds"] is None:
        return "error", "no '# Out of bounds values' footer"
    if wrong is None:
        return "error", "no #wrong column with values: was the run's data check (-c) off?"
    # A run that concluded (its footer is there) may print fewer sizes than -b..-e asks for:
    # hypercube_perf stops at 16 MiB of -e 64M on 2 GPUs (2026-11-26). Unreadable rows, none, or
    # more than asked for are errors; a run cut short has no footer (above).
    n = len(parsed["rows"])
    if n == 0 or n > expect_rows or parsed["unparsed_rows"]:
        return "error", f"{n} rows, expected up to {expect_rows} ({parsed['unparsed_rows']} unreadable)"
    if missing_checks:
        return "log-check", missing_checks[0]
    return "pass", ""


def tail(text, n):
    return [ln[:_LINE_CHARS] for ln in text.splitlines()[-n:]]


def cmd_record(a):
    if a.not_run:
        rec = {"op": a.op, "config": a.config, "mode": a.mode, "rep": a.rep, "status": "not-run",
               "why": a.not_run, "failovers_done": None, "wrong_values": None, "avg_busbw": None}
        with open(a.jsonl, "a") as f:
            f.write(json.dumps(rec) + "\n")
        return
    read = lambda p: open(p, errors="replace").read()
    stdout, stderr = read(a.stdout), read(a.stderr)
    nccl_logs = [read(p) for p in a.nccl_log]
    parsed = parse_output(stdout)
    crashes = crash_lines([stderr, stdout])
    status, why = verdict(a.rc, a.timed_out, parsed, crashes, a.missing_check, a.expect_rows)
    rec = {"op": a.op, "config": a.config, "mode": a.mode, "rep": a.rep, "status": status, "why": why,
           "rc": a.rc, "seconds": a.seconds, "failovers_done": a.failovers,
           "wrong_values": wrong_values(parsed), "out_of_bounds": parsed["out_of_bounds"],
           "avg_busbw": parsed["avg_busbw"], "nccl_tests": parsed["nccl_tests"],
           "nccl_library": parsed["nccl_library"], "devices": parsed["devices"],
           "missing_checks": a.missing_check,
           # time too: nccl-tests prints busbw to 0.01 GB/s, 0.00 for every size under ~16 KiB
           "rows": [{"bytes": r["bytes"], "busbw_oop": r["out_of_place"]["busbw"],
                     "time_us_oop": r["out_of_place"]["time_us"], "time_us_ip": r["in_place"]["time_us"],
                     "busbw_ip": r["in_place"]["busbw"], "wrong_oop": r["out_of_place"]["wrong"],
                     "wrong_ip": r["in_place"]["wrong"]} for r in parsed["rows"]]}
    if status != "pass":  # what a reader needs to see why, and no more
        rec["tail"] = {"crash_lines": crashes[:_TAIL_LINES], "stdout": tail(stdout, _TAIL_LINES),
                       "stderr": tail(stderr, _TAIL_LINES),
                       "nccl_log": [ln for t in nccl_logs for ln in tail(t, 10)]}
    with open(a.jsonl, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(status if status == "pass" else f"{status}: {why}")


def load_runs(paths):
    """(runs, the machine records of the earlier calls among paths)."""
    runs, earlier = [], []
    for p in paths:
        text = open(p).read()
        if p.endswith(".json"):  # an earlier call: its runs that never started are this call's
            doc = json.loads(text)
            runs += [r for r in doc["runs"] if r["status"] != "not-run"]
            earlier.append((p, doc.get("machine", {})))
        else:
            runs += [json.loads(ln) for ln in text.splitlines() if ln.strip()]
    return runs, earlier


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def summarize(runs, one_gpu):
    """One row per (op, config, mode) in first-seen order, with busbw relative to socket."""
    groups = {}
    for r in runs:
        groups.setdefault((r["op"], r["config"], r["mode"]), []).append(r)
    rows = []
    for (op, config, mode), rs in groups.items():
        done = [r for r in rs if r["status"] != "not-run"]
        statuses = Counter(r["status"] for r in rs)
        fo = sorted(r["failovers_done"] for r in done if r["failovers_done"] is not None)
        wrong = [r["wrong_values"] for r in done if r["wrong_values"] is not None]
        rows.append({"op": op, "config": config, "mode": mode, "runs": len(rs),
                     "passed": statuses["pass"], "statuses": dict(statuses),
                     "wrong_values": sum(wrong) if wrong else None,
                     "failovers_done": (fo[0], fo[-1]) if fo else None,
                     "avg_busbw": _mean(r["avg_busbw"] for r in done if r["status"] == "pass")})
    socket = {(r["op"], r["mode"]): r["avg_busbw"] for r in rows if r["config"] == "socket"}
    for r in rows:
        s = socket.get((r["op"], r["mode"]))
        r["busbw_vs_socket"] = None if one_gpu or not s or r["avg_busbw"] is None else r["avg_busbw"] / s
    return rows


def format_table(rows, meta, one_gpu):
    def result(r):
        if r["passed"] == r["runs"]:
            return "pass" if r["runs"] == 1 else f"pass {r['passed']}/{r['runs']}"
        bad = ", ".join(f"{s} {n}" for s, n in sorted(r["statuses"].items()) if s != "pass")
        return f"FAIL {r['runs'] - r['passed']}/{r['runs']} ({bad})"

    def failovers(r):
        if r["failovers_done"] is None:
            return "-"
        lo, hi = r["failovers_done"]
        return str(lo) if lo == hi else f"{lo}-{hi}"

    lines = [" ".join(f"{k} {v};" for k, v in meta.items()).rstrip(";")]
    if one_gpu:
        lines.append("busbw ratio n/a: both ranks time-slice one GPU, so busbw measures the sharing, "
                     "not the transport")
    head = ("op", "config", "mode", "result", "wrong", "failovers", "busbw GB/s", "vs socket")
    body = [(r["op"], r["config"], r["mode"], result(r),
             "-" if r["wrong_values"] is None else str(r["wrong_values"]), failovers(r),
             "-" if r["avg_busbw"] is None else f"{r['avg_busbw']:.2f}",
             "n/a" if r["busbw_vs_socket"] is None else f"{r['busbw_vs_socket']:.2f}x")
            for r in rows]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" if i < 4 else "---:" for i in range(len(head))) + "|")
    lines += ["| " + " | ".join(b) + " |" for b in body]
    return "\n".join(lines)


def cmd_table(a):
    runs, earlier = load_runs(a.inputs)
    if not runs:
        sys.exit("nccl_tests_table: no runs in " + " ".join(a.inputs))
    meta = dict(kv.partition("=")[::2] for kv in a.meta) or (earlier[0][1] if earlier else {})
    for path, m in earlier:  # one table, one set of sizes and one fault: ratios compare like runs
        for key in ("args", "fault", "gpus"):
            if key in meta and m.get(key) != meta[key]:
                sys.exit(f"nccl_tests_table: {path} ran with {key} '{m.get(key)}', this call with "
                         f"'{meta[key]}': its runs do not belong in this table")
    one_gpu = meta.get("gpus") == "1"
    rows = summarize(runs, one_gpu)
    print(format_table(rows, meta, one_gpu))
    failed = [r for r in runs if r["status"] != "pass"]
    with open(a.json, "w") as f:
        json.dump({"machine": meta, "summary": rows, "runs": runs}, f, indent=1)
    if a.failures and failed:
        with open(a.failures, "w") as f:
            for r in failed:
                f.write(f"== {r['op']} {r['config']} {r['mode']} rep {r['rep']}: {r['status']}: {r['why']}\n")
                for part, lines in r.get("tail", {}).items():
                    f.write(f"-- {part}\n" + "".join(ln + "\n" for ln in lines))
    if failed:
        print(f"{len(failed)} of {len(runs)} runs failed", file=sys.stderr)
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record")
    for name in ("jsonl", "op", "config", "mode"):
        rec.add_argument("--" + name, required=True)
    rec.add_argument("--rep", type=int, required=True)
    rec.add_argument("--not-run", metavar="WHY")
    rec.add_argument("--stdout")
    rec.add_argument("--stderr")
    for name in ("rc", "timed-out", "failovers", "expect-rows"):
        rec.add_argument("--" + name, type=int, default=0)
    rec.add_argument("--seconds", type=float, default=0.0)
    rec.add_argument("--nccl-log", action="append", default=[])
    rec.add_argument("--missing-check", action="append", default=[])
    tab = sub.add_parser("table")
    tab.add_argument("--json", required=True)
    tab.add_argument("--failures")
    tab.add_argument("--meta", action="append", default=[])
    tab.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    if a.cmd == "record" and not a.not_run and not (a.stdout and a.stderr):
        ap.error("record needs --stdout and --stderr (or --not-run)")
    (cmd_record if a.cmd == "record" else cmd_table)(a)


if __name__ == "__main__":
    main()
