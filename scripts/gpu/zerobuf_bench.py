"""One rank of the zero-buffer latency benchmark (issue 29; scripts/gpu/zerobuf_bench.sh starts one
per GPU).

For every op and size: NCCL (torch.distributed) and libzerobuf-railcheck.so on the same inputs,
each zero-buffer path that can take the call (auto = what the library chooses, LL, direct) checked
against NCCL's output (bit-exact; for reductions over more than two ranks, to rounding, since
NCCL sums in ring order), then timed two ways, NCCL the same way in the same run:
  graph  the calls captured back to back in a CUDA graph (as inference engines run them), the
         graph replayed; device time per call, median over repetitions
  eager  the calls issued from Python one by one (host work included), device time per call
Before each timed repetition both ranks meet (a store barrier, then one NCCL all-reduce on the
stream so the GPUs start together). Sizes are the larger buffer of the op, as nccl-tests counts
them (all-gather output, reduce-scatter input, all-reduce buffer, all-to-all buffer).
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

MiB = 1 << 20
OPS = ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"]
OP_CODE = {"all_gather": 0, "reduce_scatter": 1, "all_reduce": 2, "all_to_all": 3}
PATH_NAME = {0: "program", 1: "ll", 2: "direct"}


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
    ap.add_argument("--paths", default="auto,ll,direct", help="zero-buffer paths to measure")
    ap.add_argument("--no-eager", action="store_true")
    ap.add_argument("--device", type=int, default=None, help="this rank's GPU (default: the rank)")
    ap.add_argument("--check-only", action="store_true",
                    help="check every path against NCCL, time nothing (ranks sharing a GPU: the GPU "
                         "time-slices between processes, so timings would mean nothing)")
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
    zb = ZeroBuf(a.lib, rank, n, a.zb_root, device=dev, large_heap_bytes=a.large_heap, timeout_s=10.0)
    m2 = used()
    mem = {"nccl_mib": (m1 - m0) / MiB, "zerobuf_mib": (m2 - m1) / MiB, "zerobuf_window_mib": zb.window_bytes / MiB}
    log(rank, f"NCCL {torch.cuda.nccl.version()}, memory {json.dumps(mem)}")

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
        "rows": rows,
    }

    def save():
        # After every size, so a run cut short still leaves what it measured.
        if rank == 0:
            report["wrong"] = wrong
            with open(a.out, "w") as f:
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
            nccl_call(op, ref, inp)
            row = {"op": op, "bytes": size}
            nin = inp.clone()
            nout = nin if op == "all_reduce" else torch.empty(out_n, device="cuda")
            if not a.check_only:
                row["nccl_graph_us"] = timer.graph_us(lambda: nccl_call(op, nout, nin), size)
            if not a.no_eager and not a.check_only:
                row["nccl_eager_us"] = timer.eager_us(lambda: nccl_call(op, nout, nin), size)
            del nin, nout
            try:
                with zb.pool():
                    zin = torch.empty(in_n, device="cuda")
                    zout = zin if op == "all_reduce" else torch.empty(out_n, device="cuda")
            except torch.OutOfMemoryError:
                # The window is full (a bench setting: LARGE_HEAP); the same on every rank.
                row["zb_error"] = "the zero-buffer window has no room for this size (LARGE_HEAP)"
                rows.append(row)
                log(rank, f"{op} {size} B: {row['zb_error']}")
                del inp, ref
                torch.cuda.empty_cache()
                continue
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
                except (ZeroBufError, RuntimeError) as e:
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
    zb.close()
    dist.destroy_process_group()
    sys.exit(0 if total_wrong == 0 else 1)


if __name__ == "__main__":
    main()
