#!/usr/bin/env python3
"""Turn sweep results (results.jsonl from `railcheck sweep`) into PNG plots and one
self-contained HTML report (images inlined), for `railcheck report`.

Each figure puts one sweep axis on x (--x, default: the first axis) and draws one line per
value of another (--lines, default: the second axis); seeds and any further axes are averaged,
and the figure says so. Malformed input is one line naming file and line, exit status 2.
"""
import argparse
import base64
import html
import json
import os
import sys
from collections import defaultdict

# (metric, y label with unit, how a run turns into a number); None values are left out.
METRICS = [
    ("failover_rate", "runs with a failover (%)", lambda r: 100.0 * (r.get("failovers", 0) > 0)),
    # A failover the soft RTO started is a false one when the base scenario has no real failure
    # (sweeps/rto-calibration.scenario.toml): the HCA was still retrying.
    ("soft_rto_failover_rate", "runs failed over by the soft RTO (%)",
     lambda r: 100.0 * str(r.get("detected_by", "")).startswith("soft RTO")),
    ("false_alarm_rate", "runs with a false alarm (%)", lambda r: 100.0 * (r.get("false_alarms", 0) > 0)),
    ("detected_ms", "fault to detection (ms)",
     lambda r: None if r.get("detected_ms") is None or r.get("fault_ms") is None else r["detected_ms"] - r["fault_ms"]),
    ("switched_ms", "fault to switch (ms)",
     lambda r: None if r.get("switched_ms") is None or r.get("fault_ms") is None else r["switched_ms"] - r["fault_ms"]),
    ("end_ms", "run completion time (ms, simulated)", lambda r: r.get("end_ms")),
    ("lost", "messages lost (count)", lambda r: r.get("lost")),
]
REQUIRED = ("point", "params", "seed", "outcome")
# Row keys the metrics compute with: each a number (or null) when present.
NUMERIC = ("failovers", "false_alarms", "detected_ms", "fault_ms", "switched_ms", "end_ms", "lost")
MAX_LINE = 1 << 20


class BadInput(Exception):
    pass


def read_rows(path):
    if os.path.isdir(path):
        path = os.path.join(path, "results.jsonl")
    try:
        with open(path, "rb") as f:
            raw = f.readlines()
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}")
    lines = []
    for n, b in enumerate(raw, 1):
        try:
            lines.append(b.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise BadInput(f"{path}:{n}: not UTF-8 text (byte {e.start + 1} of the line)")
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            raise BadInput(f"{path}:{n}: line of {len(line)} characters; a sweep row is under {MAX_LINE}")
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise BadInput(f"{path}:{n}: not JSON ({e.msg}); expected one sweep row per line")
        except RecursionError:
            raise BadInput(f"{path}:{n}: JSON nested too deeply; a sweep row is one flat object")
        if not isinstance(row, dict):
            raise BadInput(f"{path}:{n}: expected a JSON object, got {type(row).__name__}")
        missing = [k for k in REQUIRED if k not in row]
        if missing:
            raise BadInput(f"{path}:{n}: missing {', '.join(missing)}; is this a railcheck sweep results.jsonl?")
        if not isinstance(row["params"], dict):
            raise BadInput(f"{path}:{n}: params: expected an object")
        for k, v in row["params"].items():
            if not isinstance(v, (str, int, float, bool)):
                raise BadInput(f"{path}:{n}: params.{k}: expected a number, string or boolean, got {type(v).__name__}")
        if not isinstance(row["seed"], int) or isinstance(row["seed"], bool):
            raise BadInput(f"{path}:{n}: seed: expected an integer, got {type(row['seed']).__name__}")
        if not isinstance(row["outcome"], str):
            raise BadInput(f"{path}:{n}: outcome: expected a string, got {type(row['outcome']).__name__}")
        for k in NUMERIC:
            v = row.get(k)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)):
                raise BadInput(f"{path}:{n}: {k}: expected a number, got {type(v).__name__}")
        rows.append(row)
    if not rows:
        raise BadInput(f"{path}: no rows; run `railcheck sweep` first")
    return path, [r for r in rows if r["outcome"] != "error"], len(rows)


# The seed's calibration x axis (15.4, experiment B): the HCA's retry window,
# 4.096 us x 2^qp_timeout per attempt x (qp_retry_cnt + 1) attempts, added as a parameter of every
# row when both are sweep axes, so that `--x hw_window_ms` folds the two into one axis.
HW_WINDOW = "hw_window_ms"
HW_WINDOW_AXES = ("engine.qp_timeout", "engine.qp_retry_cnt")


def add_hw_window(rows):
    for r in rows:
        p = r["params"]
        t, c = (as_number(str(p.get(k, ""))) for k in HW_WINDOW_AXES)
        if t is not None and c is not None:
            p[HW_WINDOW] = f"{4.096e-3 * 2 ** t * (c + 1):.0f}"


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def sort_key(v):
    n = as_number(v)
    return (0, n, "") if n is not None else (1, 0.0, v)


def plot_metric(plt, rows, x_key, line_key, metric, ylabel, value_of, fixed_text, out_png):
    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        v = value_of(r)
        if v is None:
            continue
        x = r["params"].get(x_key, str(r["seed"])) if x_key else str(r["seed"])
        line = r["params"].get(line_key, "all runs") if line_key else "all runs"
        groups[line][x].append(float(v))
    if not groups:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for line in sorted(groups, key=sort_key):
        xs = sorted(groups[line], key=sort_key)
        numeric = all(as_number(x) is not None for x in xs)
        pos = [as_number(x) for x in xs] if numeric else list(range(len(xs)))
        ys = [sum(groups[line][x]) / len(groups[line][x]) for x in xs]
        ax.plot(pos, ys, marker="o", label=f"{line_key} = {line}" if line_key else line)
        if not numeric:
            ax.set_xticks(pos, xs)
    ax.set_xlabel(x_key or "seed")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{ylabel} vs {x_key or 'seed'}", fontsize=10)
    fig.text(0.01, 0.01, fixed_text, fontsize=7, color="dimgray")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return True


def main(argv):
    try:
        return report(argv)
    except BadInput as e:
        print(f"railcheck report: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"railcheck report: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    except MemoryError:
        print("railcheck report: out of memory", file=sys.stderr)
        return 2
    except Exception as e:  # never a traceback: one line, and the internal-error code
        print(f"railcheck report: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 70


def report(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="sweep output folder or its results.jsonl")
    ap.add_argument("--out", help="folder for the PNGs and report.html (default: <results>/report)")
    ap.add_argument("--x", help="axis on the x axis (default: the first)")
    ap.add_argument("--lines", help="axis drawn as one line per value (default: the second)")
    args = ap.parse_args(argv)
    try:
        path, rows, total = read_rows(args.results)
    except BadInput as e:
        print(f"railcheck report: {e}", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"railcheck report: {sys.executable} has no matplotlib (Debian: apt install python3-matplotlib)",
              file=sys.stderr)
        return 2

    add_hw_window(rows)
    axes = list(rows[0]["params"].keys()) if rows else []
    for name, key in (("--x", args.x), ("--lines", args.lines)):
        if key and key not in axes:
            print(f"railcheck report: {name} {key}: not an axis of this sweep (axes: {', '.join(axes) or 'none'})",
                  file=sys.stderr)
            return 2
    x_key = args.x or (axes[0] if axes else None)
    line_key = args.lines or next((a for a in axes if a != x_key), None)
    folded = HW_WINDOW_AXES + (HW_WINDOW,) if HW_WINDOW in (x_key, line_key) else (HW_WINDOW,)
    averaged = [a for a in axes if a not in (x_key, line_key) and a not in folded] + ["seed"]
    scenarios = sorted({r.get("scenario", "?") for r in rows})
    seeds = sorted({r["seed"] for r in rows})
    fixed_text = (f"scenario: {', '.join(scenarios)} | {len(rows)} runs, seeds {seeds[0]}..{seeds[-1]}"
                  f" ({len(seeds)}) | averaged over: {', '.join(averaged)}") if rows else ""

    out = args.out or os.path.join(os.path.dirname(path) or ".", "report")
    os.makedirs(out, exist_ok=True)
    figures = []
    for metric, ylabel, value_of in METRICS:
        png = os.path.join(out, f"{metric}.png")
        if plot_metric(plt, rows, x_key, line_key, metric, ylabel, value_of, fixed_text, png):
            figures.append((metric, ylabel, png))

    outcomes = defaultdict(int)
    for r in rows:
        outcomes[r["outcome"]] += 1
    parts = [f"<!doctype html><meta charset='utf-8'><title>railcheck sweep report</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}td,th{padding:2px 8px}</style>",
             f"<h1>Sweep report: {html.escape(', '.join(scenarios))}</h1>",
             f"<p>{html.escape(path)}: {total} rows, {total - len(rows)} without a summary (errors).</p>",
             "<p>Outcomes: " + ", ".join(f"{html.escape(k)} {v}" for k, v in sorted(outcomes.items())) + "</p>",
             f"<p>x: {html.escape(str(x_key))}; lines: {html.escape(str(line_key))}; "
             f"averaged over: {html.escape(', '.join(averaged))}</p>"]
    for metric, ylabel, png in figures:
        with open(png, "rb") as f:
            data = base64.b64encode(f.read()).decode()
        parts.append(f"<h2>{html.escape(ylabel)}</h2><img alt='{metric}' src='data:image/png;base64,{data}'>")
    report = os.path.join(out, "report.html")
    with open(report, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    print(f"railcheck report: {len(figures)} figures and {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
