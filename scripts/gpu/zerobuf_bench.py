"""One rank of the zero-buffer latency benchmark (issue 29; scripts/gpu/zerobuf_bench.sh starts one
per GPU).

For every op and size: NCCL (torch.distributed), NCCL with its buffers in a registered symmetric
window (nccl_sym.py: NCCL 2.28's symmetric kernels where it offers one) and libzerobuf-railcheck.so
on the same inputs,
each zero-buffer path that can take the call (auto = what the library chooses, LL, direct) checked
against NCCL's output (bit-exact; for reductions over more than two ranks, to rounding, since
NCCL sums in ring order), then timed two ways, NCCL the same way in the same run:
  graph  the calls captured back to back in a CUDA graph (as inference engines run them), the
         graph replayed; device time per call, median over repetitions
  eager  the calls issued from Python one by one (host work included), device time per call
Before each timed repetition both ranks meet (a store barrier, then one NCCL all-reduce on the
stream so the GPUs start together). Sizes are the larger buffer of the op, as nccl-tests counts
them (all-gather output, reduce-scatter input, all-reduce buffer, all-to-all buffer).

The zero-buffer tensors and the symmetric NCCL buffers are allocated once, at the largest size, and
every call takes views of them, so the window needs room for two tensors of --max-bytes and no more
(allocating per size left PyTorch's pool fragmented: all-to-all 256 MiB found no room).

--probe-kernels FILE: no timing and no zero-buffer calls; one call of each NCCL variant per op and
size with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logging to --nccl-log (zerobuf_bench.sh sets
these), and the kernel NCCL chose for each (its TUNING line, printed by rank 0) written to FILE; the
timed run (--kernels FILE) copies them into its rows. A separate run, so that the logging costs the
timed calls nothing.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zerobuf_ops import Barrier, make_input, nccl_call, shapes, zb_call  # noqa: E402
from zerobuf_torch import ZeroBuf, ZeroBufError  # noqa: E402
from nccl_sym import NcclError, NcclSym  # noqa: E402

MiB = 1 << 20
OPS = ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"]
OP_CODE = {"all_gather": 0, "reduce_scatter": 1, "all_reduce": 2, "all_to_all": 3}
PATH_NAME = {0: "program", 1: "ll", 2: "direct", 3: "ll2"}  # ll2: the LL two-shot all-reduce


def log(rank, *a):
    print(f"[rank {rank} {time.strftime('%H:%M:%S')}]", *a, flush=True)


def plan(size):
    """(calls per graph, replays per repetition, repetitions)."""
    if size <= 64 * 1024:
        return 20, 20, 7
    if size <= 4 * MiB:
        return 10, 8, 5
    return 3, 3, 3


class Timer:
    def __init__(self, barrier, align):
        self.barrier, self.align = barrier, align

    def _rep(self, body, n_calls):
        torch.cuda.synchronize()
        self.barrier()
        self.align()  # one NCCL all-reduce: both GPUs leave it together
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        body()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1000.0 / n_calls

    def graph_us(self, fn, size):
        calls, replays, reps = plan(size)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        self.barrier()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(calls):
                fn()
        torch.cuda.synchronize()
        self.barrier()
        g.replay()
        torch.cuda.synchronize()

        def body():
            for _ in range(replays):
                g.replay()
        times = [self._rep(body, replays * calls) for _ in range(reps)]
        del g
        return statistics.median(times)

    def eager_us(self, fn, size):
        calls, replays, reps = plan(size)
        for _ in range(2):
            fn()

        def body():
            for _ in range(calls * replays):
                fn()
        return statistics.median(self._rep(body, calls * replays) for _ in range(reps))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--nranks", type=int, default=2)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--store-port", type=int, default=29500)
    ap.add_argument("--zb-root", default="127.0.0.1:29501")
    ap.add_argument("--min-bytes", type=int, default=8)
    ap.add_argument("--max-bytes", type=int, default=256 * MiB)
    ap.add_argument("--large-heap", type=int, default=0, help="bytes (0: the library's default)")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--paths", default="auto,ll,direct", help="zero-buffer paths to measure (auto, ll, ll2, direct)")
    ap.add_argument("--no-eager", action="store_true")
    ap.add_argument("--device", type=int, default=None, help="this rank's GPU (default: the rank)")
    ap.add_argument("--check-only", action="store_true",
                    help="check every path against NCCL, time nothing (ranks sharing a GPU: the GPU "
                         "time-slices between processes, so timings would mean nothing)")
    ap.add_argument("--no-nccl-sym", action="store_true", help="leave out NCCL with a symmetric window")
    ap.add_argument("--probe-kernels", default=None, help="write which NCCL kernel each call ran, time nothing")
    ap.add_argument("--nccl-log", default=None, help="NCCL_DEBUG_FILE of this rank (for --probe-kernels)")
    ap.add_argument("--kernels", default=None, help="a --probe-kernels file: its kernels go into the rows")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rank, n = a.rank, a.nranks
    dev = rank if a.device is None else a.device
    torch.cuda.set_device(dev)
    torch.zeros(1, device="cuda")
    store = dist.TCPStore("127.0.0.1", a.store_port, n, rank == 0, timeout=datetime.timedelta(seconds=300))
    barrier = Barrier(store, n)

    def used():
        torch.cuda.synchronize()
        f, t = torch.cuda.mem_get_info()
        return t - f

    barrier()
    m0 = used()
    dist.init_process_group("nccl", store=dist.PrefixStore("nccl", store), rank=rank, world_size=n,
                            device_id=torch.device("cuda", dev))
    one = torch.ones(1, device="cuda")
    dist.all_reduce(one)
    # Every op once at a small size, so NCCL has set up what its collectives need.
    x = torch.ones(1024 * n, device="cuda")
    y = torch.empty(1024 * n, device="cuda")
    dist.all_gather_into_tensor(y, x[:1024])
    dist.reduce_scatter_tensor(x[:1024], y)
    dist.all_to_all_single(y, x)
    del x, y
    m1 = used()
    probe = a.probe_kernels is not None
    mem = {"nccl_mib": (m1 - m0) / MiB}
    zb = None
    if not probe:
        zb = ZeroBuf(a.lib, rank, n, a.zb_root, device=dev, large_heap_bytes=a.large_heap, timeout_s=10.0)
        m2 = used()
        mem.update(zerobuf_mib=(m2 - m1) / MiB, zerobuf_window_mib=zb.window_bytes / MiB)
        # Every size takes views of these: the window holds two tensors of the largest size.
        with zb.pool():
            zin_full = torch.empty(a.max_bytes // 4, device="cuda")
            zout_full = torch.empty(a.max_bytes // 4, device="cuda")
        m1 = used()
        mem["zerobuf_tensors_outside_window_mib"] = (m1 - m2) / MiB
    sym, sym_error = None, None
    if not a.no_nccl_sym:
        try:
            sym = NcclSym(store, rank, n, a.max_bytes)
        except NcclError as e:  # NCCL refused the window: the run goes on without that variant
            sym_error = str(e)
            log(rank, f"NCCL with a symmetric window: {sym_error}")
    if sym is not None:
        # Every op once at a small size, as for torch's communicator above.
        for op in OPS:
            k_in, k_out = shapes(op, 4096 * n, n)
            sym.call(op, sym.out[:k_out], sym.inp[:k_in])
        m3 = used()
        mem.update(nccl_sym_mib=(m3 - m1) / MiB, nccl_sym_window_mib=2 * sym.window_bytes / MiB)
        log(rank, f"NCCL with symmetric windows: {sym.lib_path}, version {sym.version}")
    log(rank, f"NCCL {torch.cuda.nccl.version()}, memory {json.dumps(mem)}")
    kernels = {}
    if a.kernels:
        with open(a.kernels) as f:
            kernels = json.load(f)["kernels"]
    nccl_log = open(a.nccl_log) if probe and rank == 0 and a.nccl_log and os.path.exists(a.nccl_log) else None

    def tuning_line():
        """NCCL's last TUNING line since the previous look (rank 0 logs one per collective)."""
        if nccl_log is None:
            return None
        got = [ln.split("NCCL INFO ", 1)[1].strip() for ln in nccl_log.read().splitlines()
               if "NCCL INFO " in ln and "Bytes ->" in ln]
        return got[-1] if got else "no TUNING line (p2p send/recv)"

    def align():
        dist.all_reduce(one)

    timer = Timer(barrier, align)
    rows, wrong = [], 0
    signatures = []  # all-reduce outputs: the same bits on every rank?
    report = {
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": torch.cuda.get_device_name(dev),
        "ranks_per_gpu_shared": a.device is not None and a.check_only,
        "gpus": n,
        "torch": torch.__version__,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "memory": mem,
        "env": {k: v for k, v in os.environ.items() if k.startswith(("ZEROBUF_", "NCCL_"))},
        "nccl_sym": {"error": sym_error} if sym is None else {"library": sym.lib_path, "version": sym.version,
                                              "window_flags": "NCCL_WIN_COLL_SYMMETRIC"},
        "rows": rows,
    }
    if probe:
        probed = {}
        report = {"nccl": report["nccl"], "gpus": n, "kernels": probed}

    def save():
        # After every size, so a run cut short still leaves what it measured.
        if rank == 0:
            report["wrong"] = wrong
            with open(a.probe_kernels or a.out, "w") as f:
                json.dump(report, f, indent=1)

    ops = a.ops.split(",")
    paths = a.paths.split(",")
    size = a.min_bytes
    while size <= a.max_bytes:
        for op in ops:
            in_n, out_n = shapes(op, size, n)
            if in_n == 0 or out_n == 0 or (op == "all_to_all" and size % (4 * n)):
                continue
            inp = make_input(op, size, rank, in_n)
            ref = torch.empty(out_n, device="cuda")
            if op == "all_reduce":
                ref.copy_(inp)
            tuning_line()
            nccl_call(op, ref, inp)
            torch.cuda.synchronize()
            row = {"op": op, "bytes": size}
            if probe:
                probed[f"{op}/{size}"] = {"nccl": tuning_line()}
            elif f"{op}/{size}" in kernels:
                row["nccl_kernel"] = kernels[f"{op}/{size}"].get("nccl")
                row["nccl_sym_kernel"] = kernels[f"{op}/{size}"].get("nccl_sym")
            if sym is not None:
                sin = sym.inp[:in_n]
                sout = sin if op == "all_reduce" else sym.out[:out_n]
                sin.copy_(inp)
                sym.call(op, sout, sin)
                torch.cuda.synchronize()
                if probe:
                    probed[f"{op}/{size}"]["nccl_sym"] = tuning_line()
                exact = bool(torch.equal(sout, ref))
                row["nccl_sym_exact"] = exact
                if not (exact or (OP_CODE[op] in (1, 2) and bool(torch.allclose(sout, ref, rtol=1e-5, atol=1e-5)))):
                    row["nccl_sym_wrong"] = True
                    log(rank, f"NCCL symmetric {op} {size} B differs from NCCL: max diff "
                              f"{float((sout - ref).abs().max().item())}")
                if not a.check_only and not probe:
                    row["nccl_sym_graph_us"] = timer.graph_us(lambda: sym.call(op, sout, sin), size)
                if not a.no_eager and not a.check_only and not probe:
                    row["nccl_sym_eager_us"] = timer.eager_us(lambda: sym.call(op, sout, sin), size)
            if probe:
                del inp, ref
                continue
            nin = inp.clone()
            nout = nin if op == "all_reduce" else torch.empty(out_n, device="cuda")
            if not a.check_only:
                row["nccl_graph_us"] = timer.graph_us(lambda: nccl_call(op, nout, nin), size)
            if not a.no_eager and not a.check_only:
                row["nccl_eager_us"] = timer.eager_us(lambda: nccl_call(op, nout, nin), size)
            del nin, nout
            zin = zin_full[:in_n]
            zout = zin if op == "all_reduce" else zout_full[:out_n]
            for p in paths:
                zb.set_path(p)
                taken = PATH_NAME[zb.path_of(OP_CODE[op], zin, zout, size if op == "all_reduce" else
                                             (zin.numel() * 4 if op == "all_gather" else
                                              zout.numel() * 4 if op == "reduce_scatter" else size // n))]
                if p != "auto" and taken != p:
                    continue
                key = f"zb_{p}"
                row[f"{key}_path"] = taken
                zin.copy_(inp)
                try:
                    zb_call(zb, op, zout, zin)
                    torch.cuda.synchronize()
                    zb.check()
                    exact = bool(torch.equal(zout, ref))
                    row[f"{key}_exact"] = exact
                    # Two ranks: a + b is b + a, so every path must match NCCL bit for bit. More
                    # ranks: NCCL sums in ring order, the zero-buffer paths in rank order; the
                    # sums agree to rounding.
                    close = exact or (n > 2 and OP_CODE[op] in (1, 2) and
                                      bool(torch.allclose(zout, ref, rtol=1e-5, atol=1e-5)))
                    # Every rank must hold the same bits (rank-order sums), whatever NCCL's order.
                    v = zout.view(torch.int32)
                    sig = [int(v.sum(dtype=torch.int64)), int(v[1::2].sum(dtype=torch.int64)),
                           int(v[::7].sum(dtype=torch.int64))]
                    if OP_CODE[op] == 2:
                        store.set(f"sig/{op}/{size}/{p}/{rank}", json.dumps(sig))
                        signatures.append(f"sig/{op}/{size}/{p}")
                    if not close:
                        wrong += 1
                        log(rank, f"WRONG {op} {size} B path {taken}: max diff "
                                  f"{float((zout - ref).abs().max().item())}")
                    if not a.check_only:
                        row[f"{key}_graph_us"] = timer.graph_us(lambda: zb_call(zb, op, zout, zin), size)
                    if not a.no_eager and not a.check_only:
                        row[f"{key}_eager_us"] = timer.eager_us(lambda: zb_call(zb, op, zout, zin), size)
                    zb.check()
                except (ZeroBufError, NcclError, RuntimeError) as e:
                    row[f"{key}_error"] = str(e).splitlines()[0]
                    wrong += 1
                    log(rank, f"{op} {size} B path {p}: {row[f'{key}_error']}")
                    raise
            zb.set_path("auto")
            rows.append(row)
            del zin, zout, inp, ref
        if rank == 0:
            log(rank, f"{size} B done")
        save()
        torch.cuda.empty_cache()
        size *= 2

    if probe:
        save()
        barrier()
        if sym is not None:
            sym.close()
        dist.destroy_process_group()
        sys.exit(0)
    report["wrong"] = wrong
    store.set(f"wrong/{rank}", str(wrong))
    barrier()
    total_wrong = sum(int(store.get(f"wrong/{r}").decode()) for r in range(n))
    report["wrong_all_ranks"] = total_wrong
    if rank == 0:
        differ = [k for k in signatures if len({store.get(f"{k}/{r}").decode() for r in range(n)}) != 1]
        report["allreduce_outputs_checked_same_on_every_rank"] = len(signatures)
        report["allreduce_outputs_differing_between_ranks"] = differ
        if differ:
            log(rank, f"all-reduce outputs that differ between ranks: {differ[:5]}")
            total_wrong += len(differ)
    if rank == 0:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    barrier()
    del zin_full, zout_full
    zb.close()
    if sym is not None:
        sym.close()
    dist.destroy_process_group()
    sys.exit(0 if total_wrong == 0 else 1)


if __name__ == "__main__":
    main()
