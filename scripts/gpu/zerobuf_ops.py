"""What the zero-buffer GPU scripts share (zerobuf_check.py, zerobuf_bench.py): a barrier over the
torch.distributed store, the tensor shapes of each op for a size, and seeded inputs."""
import time
import zlib

import torch


class Barrier:
    """Every rank calls it in the same order; `name` (optional) makes the key readable in logs."""

    def __init__(self, store, n):
        self.store, self.n, self.count = store, n, 0

    def __call__(self, name=None, timeout_s=120):
        self.count += 1
        key = f"barrier/{self.count}/{name or ''}"
        self.store.add(key, 1)
        deadline = time.time() + timeout_s
        while self.store.add(key, 0) < self.n:
            if time.time() > deadline:
                raise RuntimeError(f"barrier {self.count} {name or ''}: a rank did not arrive in {timeout_s} s")
            time.sleep(0.0002)


def shapes(op, size, n):
    """(input elements, output elements) of float32 for a message of `size` bytes (the larger
    buffer, as nccl-tests counts: all-gather output, reduce-scatter input)."""
    e = size // 4
    return {"all_gather": (e // n, e), "reduce_scatter": (e, e // n)}.get(op, (e, e))


def make_input(op, size, rank, numel):
    """Normal float32s from a seed of (op, size, rank): the same on every run (crc32, not hash(),
    which Python salts per process)."""
    g = torch.Generator(device="cuda")
    g.manual_seed(zlib.crc32(f"{op}/{size}/{rank}".encode()) & 0x7FFFFFFF)
    return torch.randn(numel, generator=g, device="cuda", dtype=torch.float32)


def nccl_call(op, out, inp):
    """NCCL's collective through torch.distributed; all-reduce (either form) reduces `out` in
    place, as the benchmarks time it (copy the input into `out` first for a reference result)."""
    import torch.distributed as dist
    if op == "all_gather":
        dist.all_gather_into_tensor(out, inp)
    elif op == "reduce_scatter":
        dist.reduce_scatter_tensor(out, inp)
    elif op == "all_to_all":
        dist.all_to_all_single(out, inp)
    else:
        dist.all_reduce(out)


def zb_call(zb, op, out, inp):
    """The same collective through a zerobuf_torch.ZeroBuf: "all_reduce" from `inp` into `out`
    (in place when they are one tensor), "all_reduce_inplace" on `out`."""
    if op == "all_gather":
        zb.all_gather(out, inp)
    elif op == "reduce_scatter":
        zb.reduce_scatter(out, inp)
    elif op == "all_to_all":
        zb.all_to_all(out, inp)
    elif op == "all_reduce":
        zb.all_reduce(out, inp)
    else:
        zb.all_reduce(out)
