"""One rank of the zero-buffer GPU check (scripts/gpu/zerobuf_gpu.sh starts two on one GPU).

For every op and size: the same inputs through torch.distributed (NCCL) and through
libzerobuf-railcheck.so, outputs compared; latency of each, back to back on one stream; extra
device memory of each (cudaMemGetInfo through torch.cuda.mem_get_info, taken with both ranks at the
same point, since two processes share the GPU); then rank 1 kills itself and rank 0 checks that its
next collective ends in a timeout error (seed §8.2) and what memory comes back when (seed §8.1).
"""
import argparse
import datetime
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zerobuf_ops import Barrier, make_input, nccl_call, shapes, zb_call  # noqa: E402
from zerobuf_torch import ZeroBuf, ZeroBufError  # noqa: E402

MiB = 1 << 20
OPS = ["all_gather", "reduce_scatter", "all_reduce", "all_reduce_inplace", "all_to_all"]


def log(rank, *a):
    print(f"[rank {rank} {time.strftime('%H:%M:%S')}]", *a, flush=True)


def free_bytes():
    torch.cuda.synchronize()
    return torch.cuda.mem_get_info()[0]


def iters_for(nbytes):
    return 20 if nbytes <= MiB else (10 if nbytes <= 16 * MiB else 3)


def time_us(fn, iters, barrier, name):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    barrier(name)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000.0 / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--nranks", type=int, default=2)
    ap.add_argument("--device", type=int, default=0, help="this rank's GPU")
    ap.add_argument("--shared-gpu", action="store_true", help="every rank on one GPU (memory deltas are shared)")
    ap.add_argument("--lib", required=True)
    ap.add_argument("--store-port", type=int, default=29500)
    ap.add_argument("--zb-root", default="127.0.0.1:29501")
    ap.add_argument("--min-bytes", type=int, default=8)
    ap.add_argument("--max-bytes", type=int, default=256 * MiB)
    ap.add_argument("--large-heap", type=int, default=2048 * MiB)
    ap.add_argument("--timeout-s", type=float, default=5.0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rank, n = a.rank, a.nranks
    torch.cuda.set_device(a.device)
    torch.zeros(1, device="cuda")
    share = n if a.shared_gpu else 1  # device-wide memory deltas are split among the ranks on it
    store = dist.TCPStore("127.0.0.1", a.store_port, n, rank == 0, timeout=datetime.timedelta(seconds=120))
    barrier = Barrier(store, n)
    store.set(f"pid/{rank}", str(os.getpid()))
    mem = {}

    barrier("contexts")
    free_a = free_bytes()
    dist.init_process_group("nccl", store=dist.PrefixStore("nccl", store), rank=rank, world_size=n,
                            device_id=torch.device("cuda", a.device))
    warm = torch.ones(1, device="cuda")
    dist.all_reduce(warm)
    barrier("nccl-up")
    free_b = free_bytes()
    log(rank, f"NCCL {torch.cuda.nccl.version()} up; all-reduce of ones gave {warm.item()}")

    barrier("zb-before")
    free_c = free_bytes()
    t0 = time.time()
    zb = ZeroBuf(a.lib, rank, n, a.zb_root, device=a.device, large_heap_bytes=a.large_heap,
                 small_heap_bytes=2 * MiB, timeout_s=a.timeout_s)
    barrier("zb-up")
    free_d = free_bytes()
    log(rank, f"zerobuf up in {time.time() - t0:.2f} s: window {zb.window_bytes / MiB:.0f} MiB")
    mem["nccl_init_mib_per_rank"] = (free_a - free_b) / share / MiB
    mem["zerobuf_init_mib_per_rank"] = (free_c - free_d) / share / MiB
    mem["zerobuf_window_mib"] = zb.window_bytes / MiB

    results, failure = [], None
    size = a.min_bytes
    while size <= a.max_bytes and failure is None:
        for op in OPS:
            in_n, out_n = shapes(op, size, n)
            inp = make_input(op, size, rank, in_n)
            ref = torch.empty(out_n, device="cuda")
            if op.startswith("all_reduce"):
                ref.copy_(inp)  # NCCL's all-reduce works in place
            nccl_call(op, ref, inp)
            row = {"op": op, "bytes": size}
            zin = zout = None
            try:
                with zb.pool():
                    zin = inp.clone()
                    zout = zin if op == "all_reduce_inplace" else torch.empty(out_n, device="cuda")
                zb_call(zb, op, zout, zin)
                torch.cuda.synchronize()
                zb.check()
                exact = bool(torch.equal(zout, ref))
                diff = 0.0 if exact else float((zout - ref).abs().max().item())
                row.update(correct=exact or diff <= 1e-5 * max(1.0, float(ref.abs().max().item())), exact=exact,
                           max_abs_diff=diff)
                iters = iters_for(size)
                scratch = torch.empty_like(ref)
                row["nccl_us"] = time_us(lambda: nccl_call(op, scratch, inp), iters, barrier, f"t-nccl-{op}-{size}")
                row["zb_us"] = time_us(lambda: zb_call(zb, op, zout, zin), iters, barrier, f"t-zb-{op}-{size}")
                zb.check()
                del scratch
            except (ZeroBufError, torch.OutOfMemoryError) as e:
                row.update(correct=False, error=str(e).splitlines()[0])
                failure = row["error"]
                log(rank, f"{op} {size} B: {failure}")
            results.append(row)
            del inp, ref, zin, zout
            if failure:
                break
        if rank == 0:
            done = [r for r in results if r["bytes"] == size]
            log(rank, f"{size} B: " + ", ".join(f"{r['op']} {'ok' if r['correct'] else 'WRONG'}" for r in done))
        torch.cuda.empty_cache()
        size *= 2

    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    barrier("sweep-done")
    free_e = free_bytes()
    mem["all_mib_per_rank_after_sweep"] = (free_a - free_e) / share / MiB
    dist.destroy_process_group()
    store.set(f"results/{rank}", json.dumps(results))
    barrier("results")

    if rank == 1:
        log(rank, "killing myself (SIGKILL) for the dead-peer check")
        barrier("kill")
        os.kill(os.getpid(), signal.SIGKILL)

    # Rank 0: the dead peer (seed §8.2) and what its death gives back (seed §8.1).
    barrier("kill")
    peer = int(store.get("pid/1").decode())
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            os.kill(peer, 0)
            time.sleep(0.01)
        except ProcessLookupError:
            break
    time.sleep(0.5)
    free_dead = free_bytes()
    dead = {"peer_pid": peer}
    with zb.pool():
        x = torch.ones(1024, device="cuda")
        y = torch.empty(2048, device="cuda")
    t0 = time.time()
    try:
        zb.all_gather(y, x)
        torch.cuda.synchronize()
        zb.check()
        dead.update(error=None, ok=False)
    except ZeroBufError as e:
        dead.update(error=str(e), ok="timed out" in str(e) and "rank 1" in str(e))
    dead["seconds_to_error"] = time.time() - t0
    log(rank, f"dead peer: {dead}")
    del x, y
    zb.close()
    free_closed = free_bytes()
    mem["freed_when_peer_died_mib"] = (free_dead - free_e) / MiB
    mem["freed_when_survivor_unmapped_mib"] = (free_closed - free_dead) / MiB

    peer_results = json.loads(store.get("results/1").decode())
    ok1 = {(r["op"], r["bytes"]): r.get("correct", False) for r in peer_results}
    for r in results:
        r["correct_rank1"] = ok1.get((r["op"], r["bytes"]), False)
    report = {
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": torch.cuda.get_device_name(a.device),
        "torch": torch.__version__,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "ranks": n,
        "setup": (f"{n} processes sharing one GPU (time-sliced): correctness only, latency ratios meaningless"
                  if a.shared_gpu else f"{n} processes, one GPU each"),
        "results": results,
        "memory": mem,
        "dead_peer": dead,
        "sweep_failure": failure,
    }
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    print_table(report)
    all_ok = all(r["correct"] and r["correct_rank1"] for r in results) and failure is None and dead["ok"]
    sys.exit(0 if all_ok else 1)


def human(b):
    for unit, div in (("MiB", MiB), ("KiB", 1024)):
        if b >= div:
            return f"{b // div} {unit}"
    return f"{b} B"


def print_table(rep):
    print(f"\n== zerobuf vs NCCL, {rep['gpu']}, {rep['setup']}")
    print(f"{'op':<20}{'size':>10}{'correct':>9}{'zb us':>11}{'nccl us':>11}{'zb/nccl':>9}")
    for r in rep["results"]:
        ok = "yes" if r["correct"] and r["correct_rank1"] else "NO"
        zb, nc = r.get("zb_us"), r.get("nccl_us")
        ratio = f"{zb / nc:.2f}" if zb and nc else "-"
        print(f"{r['op']:<20}{human(r['bytes']):>10}{ok:>9}{(f'{zb:.1f}' if zb else '-'):>11}"
              f"{(f'{nc:.1f}' if nc else '-'):>11}{ratio:>9}")
    print("memory:", json.dumps(rep["memory"]))
    print("dead peer:", json.dumps(rep["dead_peer"]))


if __name__ == "__main__":
    main()
