"""Tables of a zerobuf_bench.json (scripts/gpu/zerobuf_bench.sh): latency (graph and eager), busbw,
memory, which kernel NCCL ran, and issue 29/43's targets checked on the graph-captured figures
against the faster NCCL variant of each row (torch.distributed's NCCL, or NCCL with its buffers in
a symmetric window where the run measured it).

    python3 scripts/gpu/zerobuf_bench_table.py zerobuf_bench.json [--markdown]
"""
import argparse
import json

MiB = 1 << 20


def human(b):
    for unit, div in (("MiB", MiB), ("KiB", 1024)):
        if b >= div:
            return f"{b // div} {unit}"
    return f"{b} B"


def busbw_gbs(op, size, n, us):
    """nccl-tests' bus bandwidth: what each link carries, in GB/s."""
    factor = 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n
    return size * factor / (us * 1e-6) / 1e9


def best_nccl(r, mode="graph"):
    """(us, "nccl" or "sym"): the faster NCCL variant of a row."""
    got = [(r[k], v) for k, v in ((f"nccl_{mode}_us", "nccl"), (f"nccl_sym_{mode}_us", "sym")) if r.get(k)]
    return min(got) if got else (None, None)


def short_kernel(k):
    """'AllReduce [Symmetric]: 1024 Bytes -> Kernel AllReduce_AGxLL_R nchannels ...' -> 'AllReduce_AGxLL_R';
    'AllReduce: 1024 Bytes -> Algo RING proto LL channel...' -> 'RING/LL'."""
    if not k:
        return "-"
    if "-> Kernel " in k:
        return k.split("-> Kernel ", 1)[1].split()[0]
    if "-> Algo " in k:
        w = k.split("-> Algo ", 1)[1].split()
        return f"{w[0]}/{w[2]}" if len(w) > 2 else w[0]
    return "p2p" if "p2p" in k else k


def fmt(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def table(rows, headers, markdown):
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)] if rows else [len(h) for h in headers]
        out = ["  ".join(h.rjust(w[i]) for i, h in enumerate(headers))]
        out += ["  ".join(c.rjust(w[i]) for i, c in enumerate(r)) for r in rows]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--compact", action="store_true",
                    help="one row per size, one column per op: zerobuf / NCCL us (ratio), graph-captured")
    a = ap.parse_args()
    rep = json.load(open(a.json))
    n = rep["gpus"]
    print(f"zerobuf vs NCCL {rep['nccl']}: {n} x {rep['gpu']}, torch {rep['torch']}, {rep['date']}")
    if a.compact:
        by = {(r["op"], r["bytes"]): r for r in rep["rows"]}
        ops = [op for op in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
               if any(k[0] == op for k in by)]
        rows = []
        for size in sorted({k[1] for k in by}):
            cells = [human(size)]
            for op in ops:
                r = by.get((op, size), {})
                zb = r.get("zb_auto_graph_us")
                nc, which = best_nccl(r)
                path = {"ll": "LL", "ll2": "L2", "direct": "D", "program": "P"}.get(r.get("zb_auto_path"), "")
                tag = " s" if which == "sym" else ""
                cells.append(f"{zb:.1f} {path} / {nc:.1f}{tag} ({zb / nc:.2f})" if zb and nc else "-")
            rows.append(cells)
        print(table(rows, ["size"] + [op.replace("_", "-") for op in ops], a.markdown))
        return
    for mode in ("graph", "eager"):
        rows = []
        for r in rep["rows"]:
            nc = r.get(f"nccl_{mode}_us")
            if nc is None:
                continue
            auto = r.get(f"zb_auto_{mode}_us")
            best, _ = best_nccl(r, mode)
            rows.append([r["op"], human(r["bytes"]), fmt(nc), fmt(r.get(f"nccl_sym_{mode}_us")),
                         f"{fmt(auto)} ({r.get('zb_auto_path', '-')})",
                         fmt(r.get(f"zb_ll_{mode}_us")), fmt(r.get(f"zb_ll2_{mode}_us")),
                         fmt(r.get(f"zb_direct_{mode}_us")),
                         fmt(auto / best if auto else None, 2),
                         short_kernel(r.get("nccl_kernel")), short_kernel(r.get("nccl_sym_kernel"))])
        if rows:
            print(f"\nlatency, {mode}, us per call (median); zb/best: against the faster NCCL variant")
            print(table(rows, ["op", "size", "NCCL", "NCCL sym", "zerobuf (path)", "LL", "LL2", "direct", "zb/best",
                               "NCCL kernel", "NCCL sym kernel"], a.markdown))
    rows = []
    for r in rep["rows"]:
        nc, zb = r.get("nccl_graph_us"), r.get("zb_auto_graph_us")
        if nc and zb:
            rows.append([r["op"], human(r["bytes"]), fmt(busbw_gbs(r["op"], r["bytes"], n, nc)),
                         fmt(busbw_gbs(r["op"], r["bytes"], n, zb))])
    print("\nbusbw, graph, GB/s")
    print(table(rows, ["op", "size", "NCCL", "zerobuf"], a.markdown))
    print("\nmemory per rank, MiB:", json.dumps(rep["memory"]))

    # Issue 29/43's targets, on the graph-captured figures, against the faster NCCL variant.
    def q_of(r):
        return r["zb_auto_graph_us"] / best_nccl(r)[0]

    small = [r for r in rep["rows"] if r["bytes"] <= MiB and r.get("zb_auto_graph_us") and best_nccl(r)[0]]
    worst_small = max(small, key=q_of, default=None)
    ar32 = [r for r in rep["rows"] if r["op"] == "all_reduce" and r["bytes"] <= 32 * 1024 and r.get("zb_auto_graph_us")]
    slowest_ar32 = max(ar32, key=lambda r: r["zb_auto_graph_us"], default=None)
    every = [r for r in rep["rows"] if r.get("zb_auto_graph_us") and best_nccl(r)[0]]
    worst = max(every, key=q_of, default=None)
    print("\ntargets (graph, against the faster NCCL variant):")
    if worst_small:
        q = q_of(worst_small)
        print(f"  <= 1 MiB, every op at most 0.70 x NCCL: worst {q:.2f} ({worst_small['op']} "
              f"{human(worst_small['bytes'])}) -> {'met' if q <= 0.70 else 'NOT met'}")
    if slowest_ar32:
        t = slowest_ar32["zb_auto_graph_us"]
        print(f"  all-reduce <= 5 us up to 32 KiB: slowest {t:.2f} us ({human(slowest_ar32['bytes'])}) -> "
              f"{'met' if t <= 5.0 else 'NOT met'}")
    if worst:
        q = q_of(worst)
        print(f"  no op slower than NCCL: worst {q:.2f} ({worst['op']} {human(worst['bytes'])}) -> "
              f"{'met' if q <= 1.0 else 'NOT met'}")
    print(f"  bit-exact: {'every call' if rep.get('wrong_all_ranks', rep['wrong']) == 0 else 'NO'}")
    mem = rep["memory"]
    if "nccl_sym_mib" in mem and "zerobuf_mib" in mem:
        print(f"  memory per rank: zerobuf {mem['zerobuf_mib']:.0f} MiB (window, tensors inside) vs NCCL "
              f"{mem['nccl_mib']:.0f} MiB (communicator) and {mem['nccl_sym_mib']:.0f} MiB (communicator with "
              f"symmetric windows of {mem['nccl_sym_window_mib']:.0f} MiB)")


if __name__ == "__main__":
    main()
