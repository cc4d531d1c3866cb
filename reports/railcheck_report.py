#!/usr/bin/env python3
"""Turn sweep results (results.jsonl from `railcheck sweep`) into PNG plots and one
self-contained HTML report (images inlined), for `railcheck report`.

Each figure puts one sweep axis on x (--x, default: the hardware retry window when qp_timeout and
qp_retry_cnt are both axes, else the first axis) and draws one line per value of another (--lines,
default: the next axis that is not true/false); --panels draws one panel per value of a third
(default: a true/false axis, which averaged would mix two regimes); seeds and any further axes are
averaged, and the figure says so. A figure whose every series is constant says so in its title, in
report.html and on stdout: the swept axes do not move that metric, so it is one value, not a trend.
Each figure also says whether its runs' scenario family is one `railcheck validate` holds against
the netns lab (on the lab's link, not the scenario's NIC). Malformed input is one line naming file
and line, exit status 2.
"""
import argparse
import base64
import html
import json
import os
import sys
import textwrap
from collections import defaultdict

try:
    import tomllib
except ImportError:  # Python < 3.11: the validation note says it could not read the points
    tomllib = None

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


def sweep_axes(row):
    """The row's axes in the sweep file's order, which its point id keeps ("a=1,b=2,seed=3"; params is
    a JSON object, whose keys come back sorted); derived axes (hw_window_ms) last."""
    point = str(row["point"])
    def at(axis):
        i = point.find(axis + "=")
        return i if i >= 0 else len(point)
    return sorted(row["params"], key=at)


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def sort_key(v):
    n = as_number(v)
    return (0, n, "") if n is not None else (1, 0.0, v)


# A series is constant when its values differ by less than this share of their size: averages of
# equal runs can differ in the last bits, and a detection time moved by 0.1 % is not a trend.
FLAT_TOLERANCE = 1e-3


def is_constant(ys):
    return max(ys) - min(ys) <= 1e-9 + FLAT_TOLERANCE * max(abs(y) for y in ys)


def is_switch(rows, axis):
    return {r["params"].get(axis) for r in rows} <= {"true", "false"}


def series_of(rows, x_key, line_key, panel_key, value_of):
    """{panel: {line: {x: [values]}}}, runs whose metric has no value left out."""
    panels = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for r in rows:
        v = value_of(r)
        if v is None:
            continue
        x = r["params"].get(x_key, str(r["seed"])) if x_key else str(r["seed"])
        line = r["params"].get(line_key, "all runs") if line_key else "all runs"
        panel = r["params"].get(panel_key, "") if panel_key else ""
        panels[panel][line][x].append(float(v))
    return panels


def flatness(panels):
    """(every series of the figure constant, [panels whose every series is constant]), judged only
    where some series has two x values or more: one point is no line."""
    def flat(lines):
        return all(is_constant([sum(v) / len(v) for v in xs.values()]) for xs in lines.values())
    lines_of = {p: lines for p, lines in panels.items() if any(len(xs) > 1 for xs in lines.values())}
    flat_panels = [p for p, lines in lines_of.items() if flat(lines)]
    return bool(lines_of) and len(flat_panels) == len(lines_of), flat_panels


def series_levels(panels):
    """The distinct values of a figure whose every series is constant, one per series level."""
    return sorted({round(sum(v) / len(v), 3) for lines in panels.values() for xs in lines.values()
                   for v in xs.values()})


def flat_note(panels, x_key, line_key, panel_key):
    """What a figure whose every series is constant says: one value, or only the series differ."""
    levels = series_levels(panels)
    shown = ", ".join(f"{v:g}" for v in levels[:6]) + (", ..." if len(levels) > 6 else "")
    if len(levels) == 1:
        return (f"every series is constant over {x_key} ({shown}): the swept axes do not move this metric;"
                f" one value, not a trend")
    series = " and ".join(k for k in (line_key, panel_key) if k)
    return (f"every series is constant over {x_key} ({shown}): {x_key} does not move this metric;"
            f" only {series} does")


def plot_metric(plt, panels, x_key, line_key, panel_key, ylabel, footer, lab_tags, out_png):
    """lab_tags: {(panel, line): " [lab: yes]"} where series differ in validation, else empty."""
    figure_flat, flat_panels = flatness(panels)
    one_value = len(series_levels(panels)) == 1
    keys = sorted(panels, key=sort_key)
    fig, axs = plt.subplots(1, len(keys), figsize=(7 if len(keys) == 1 else 4.6 * len(keys), 4.2), sharey=True,
                            squeeze=False)
    for ax, panel in zip(axs[0], keys):
        for line in sorted(panels[panel], key=sort_key):
            pts = panels[panel][line]
            xs = sorted(pts, key=sort_key)
            numeric = all(as_number(x) is not None for x in xs)
            pos = [as_number(x) for x in xs] if numeric else list(range(len(xs)))
            ys = [sum(pts[x]) / len(pts[x]) for x in xs]
            label = (f"{line_key} = {line}" if line_key else line) + lab_tags.get((panel, line), "")
            ax.plot(pos, ys, marker="o", label=label)
            if not numeric:
                ax.set_xticks(pos, xs)
        ax.set_xlabel(x_key or "seed")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        if panel_key:
            ax.set_title(f"{panel_key} = {panel}" + ("\nevery series constant" if panel in flat_panels else ""),
                         fontsize=9, color="firebrick" if panel in flat_panels else "black")
    axs[0][0].set_ylabel(ylabel)
    title = f"{ylabel} vs {x_key or 'seed'}"
    if figure_flat:
        title += ("\nFLAT: every series is constant, at one value: the swept axes do not move it" if one_value else
                  f"\nFLAT along x: every series is constant; {x_key} does not move it")
    fig.suptitle(title, fontsize=10, color="firebrick" if figure_flat else "black")
    footer = "\n".join(textwrap.fill(line, int(fig.get_figwidth() * 20)) for line in footer.split("\n"))
    fig.text(0.01, 0.01, footer, fontsize=6.5, color="dimgray", va="bottom")
    fig.tight_layout(rect=(0, 0.04 + 0.025 * footer.count("\n"), 1, 1))
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return figure_flat, flat_panels


# Fault kinds whose scenario family `railcheck validate` runs on SimGrid and in the netns lab with
# the same outcome, counts and detection, asserted in CI (tests/cli/cmd_validate_test.cpp:
# primary-dies, short-flap, link-flap, one-way-loss, lossy-primary, peer-stall, delay-spike;
# docs/validation.md).
# The lab is two network namespaces joined by veth rails running tcp;ofi_rxm, and validate replaces
# the scenario's NIC by that calibrated link: what it holds is the engine's logic on that link,
# not the NIC's (cx7-400g's) timings, which stay the sim's model.
LAB_FAULTS = {"link_down": "link down", "flap": "flap", "one_way_loss": "one-way loss", "stall": "stall",
              "jitter": "delay/jitter"}


def lab_status(scenario):
    """(validated, one line) for one point's scenario, read from its TOML."""
    faults = {k: v for k, v in scenario.get("faults", {}).items() if v}
    topo, work = scenario.get("topology", {}), scenario.get("workload", {})
    nic = topo.get("nic", "cx7-400g")
    missing = [f"faults.{k}" for k in sorted(faults) if k not in LAB_FAULTS]
    if not faults:
        missing.append("no fault")
    if work.get("slow_ranks") and work.get("receiver_hold_ms", 0) > 0:
        missing.append("a slow receiver (workload.receiver_hold_ms)")
    if any(st.get("rank") != 1 for st in faults.get("stall", [])):
        missing.append("a stall of a rank other than the receiver")
    for key, lab in (("ranks", 2), ("rails", 2), ("paths_per_conn", 2)):
        if topo.get(key, 2) != lab:
            missing.append(f"topology.{key} = {topo[key]}")
    if missing:
        return False, f"not validated: the netns lab does not run {', '.join(missing)}"
    kinds = ", ".join(LAB_FAULTS[k] for k in sorted(faults))
    return True, (f"validated family ({kinds}): railcheck validate holds the engine's outcome, counts and detection"
                  f" in the netns lab, on its calibrated tcp;ofi_rxm link, not {nic}'s timings")


def add_lab_status(rows, results_path):
    """Sets row["lab"] = (validated, line) from the point's scenario under <results>/points/."""
    points = os.path.join(os.path.dirname(results_path) or ".", "points")
    cache = {}
    for r in rows:
        index = r.get("index")
        toml = os.path.join(points, f"p{index:06}.toml") if isinstance(index, int) else None
        if tomllib is None or toml is None or not os.path.exists(toml):
            r["lab"] = (False, f"validation unknown: no point scenarios in {points}")
            continue
        with open(toml, "rb") as f:
            text = f.read()
        # Points differ in their first line (`# sweep NAME, point N: ID`) even where the scenarios agree.
        body = text.split(b"\n", 1)[-1] if text.startswith(b"# sweep ") else text
        if body not in cache:
            try:
                cache[body] = lab_status(tomllib.loads(body.decode("utf-8")))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError, TypeError) as e:
                raise BadInput(f"{toml}: not a scenario `railcheck sweep` wrote ({e})")
        r["lab"] = cache[body]


def lab_notes(rows, x_key, line_key, panel_key):
    """(footer lines, {(panel, line): legend tag}): one line for the figure where every run shares
    its status, else a tag per series and one line per status."""
    statuses = sorted({r["lab"] for r in rows})
    if len(statuses) == 1:
        return [f"lab: {statuses[0][1]}"], {}
    per_series = defaultdict(set)
    for r in rows:
        per_series[(r["params"].get(panel_key, "") if panel_key else "",
                    r["params"].get(line_key, "all runs") if line_key else "all runs")].add(r["lab"][0])
    tags = {k: " [lab: yes]" if v == {True} else " [lab: no]" if v == {False} else " [lab: some]"
            for k, v in per_series.items()}
    return [f"lab {'yes' if ok else 'no'}: {text}" for ok, text in statuses], tags


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
    ap.add_argument("--x", help="axis on the x axis (default: hw_window_ms where qp_timeout and qp_retry_cnt are "
                                "axes, else the first)")
    ap.add_argument("--lines", help="axis drawn as one line per value (default: the next axis not true/false)")
    ap.add_argument("--panels", help="axis drawn as one panel per value (default: a true/false axis)")
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
    add_lab_status(rows, path)
    axes = sweep_axes(rows[0]) if rows else []
    for name, key in (("--x", args.x), ("--lines", args.lines), ("--panels", args.panels)):
        if key and key not in axes:
            print(f"railcheck report: {name} {key}: not an axis of this sweep (axes: {', '.join(axes) or 'none'})",
                  file=sys.stderr)
            return 2
    x_key = args.x or (HW_WINDOW if HW_WINDOW in axes else axes[0] if axes else None)
    folded = HW_WINDOW_AXES + (HW_WINDOW,) if x_key == HW_WINDOW or args.lines == HW_WINDOW else (HW_WINDOW,)
    free = [a for a in axes if a not in (x_key, args.lines, args.panels) and a not in folded]
    line_key = args.lines or next((a for a in free if not is_switch(rows, a)), None)
    # A true/false axis averaged would mix two regimes (the liveness detector on and off): by
    # default it gets a panel of its own.
    panel_key = args.panels or next((a for a in free if a != line_key and is_switch(rows, a)), None)
    averaged = [a for a in axes if a not in (x_key, line_key, panel_key) and a not in folded] + ["seed"]
    scenarios = sorted({r.get("scenario", "?") for r in rows})
    seeds = sorted({r["seed"] for r in rows})
    fixed_text = (f"scenario: {', '.join(scenarios)} | {len(rows)} runs, seeds {seeds[0]}..{seeds[-1]}"
                  f" ({len(seeds)}) | averaged over: {', '.join(averaged)}") if rows else ""
    lab_lines, lab_tags = lab_notes(rows, x_key, line_key, panel_key)

    out = args.out or os.path.join(os.path.dirname(path) or ".", "report")
    os.makedirs(out, exist_ok=True)
    figures = []
    for metric, ylabel, value_of in METRICS:
        panels = series_of(rows, x_key, line_key, panel_key, value_of)
        if not panels:
            continue
        png = os.path.join(out, f"{metric}.png")
        flat, flat_panels = plot_metric(plt, panels, x_key, line_key, panel_key, ylabel,
                                        "\n".join([fixed_text] + lab_lines), lab_tags, png)
        note = ""
        if flat:
            note = flat_note(panels, x_key, line_key, panel_key)
        elif flat_panels:
            note = "every series is constant where " + " and where ".join(f"{panel_key} = {p}" for p in flat_panels)
        if note:
            print(f"railcheck report: {metric}: {note}")
        figures.append((metric, ylabel, png, note))

    outcomes = defaultdict(int)
    for r in rows:
        outcomes[r["outcome"]] += 1
    lab_counts = defaultdict(int)
    for r in rows:
        lab_counts[r["lab"]] += 1
    for (ok, text), n in sorted(lab_counts.items()):
        print(f"railcheck report: {n} runs {text}")
    parts = [f"<!doctype html><meta charset='utf-8'><title>railcheck sweep report</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}td,th{padding:2px 8px}"
             ".flat{color:firebrick}</style>",
             f"<h1>Sweep report: {html.escape(', '.join(scenarios))}</h1>",
             f"<p>{html.escape(path)}: {total} rows, {total - len(rows)} without a summary (errors).</p>",
             "<p>Outcomes: " + ", ".join(f"{html.escape(k)} {v}" for k, v in sorted(outcomes.items())) + "</p>",
             f"<p>x: {html.escape(str(x_key))}; lines: {html.escape(str(line_key))}; "
             f"panels: {html.escape(str(panel_key))}; averaged over: {html.escape(', '.join(averaged))}</p>",
             "<h2>Validated in the lab?</h2><ul>"]
    parts += [f"<li>{n} runs: {html.escape(text)}</li>" for (ok, text), n in sorted(lab_counts.items())]
    parts.append("</ul><p>A point of a validated family is not itself run in the lab: <code>railcheck validate"
                 " &lt;results&gt;/points/pNNNNNN.toml</code> runs it there, or says why it cannot (exit 77).</p>")
    for metric, ylabel, png, note in figures:
        with open(png, "rb") as f:
            data = base64.b64encode(f.read()).decode()
        parts.append(f"<h2>{html.escape(ylabel)}</h2>")
        if note:
            parts.append(f"<p class='flat'>{html.escape(note)}</p>")
        parts.append(f"<img alt='{metric}' src='data:image/png;base64,{data}'>")
    report = os.path.join(out, "report.html")
    with open(report, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    print(f"railcheck report: {len(figures)} figures and {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
