"""The zero-buffer collectives (libzerobuf-railcheck.so, issue 16) on torch tensors.

    zb = ZeroBuf("build/libzerobuf-railcheck.so", rank, nranks, "127.0.0.1:29501")
    with zb.pool():                       # tensors from this rank's window (the SMA, through
        x = torch.empty(n, device="cuda") # torch's pluggable-allocator interface)
        y = torch.empty(2 * n, device="cuda")
    zb.all_gather(y, x)                   # queued on the current stream, like NCCL
    zb.check()                            # raises if a kernel timed out (a peer died, seed §8.2)
    zb.close()

Collective tensors must come from zb.pool(): the peers have mapped only the windows. Every rank
calls the same collectives in the same order, on one stream. Reductions are float32 sums.
"""
import ctypes

import torch

_VP = ctypes.c_void_p
_U64 = ctypes.c_uint64


class ZeroBufError(RuntimeError):
    pass


class ZeroBuf:
    def __init__(self, lib_path, rank, nranks, root_address, device=0, large_heap_bytes=0,
                 small_heap_bytes=0, timeout_s=10.0, run_id=0):
        self.lib_path = lib_path
        self.rank, self.nranks = rank, nranks
        lib = ctypes.CDLL(lib_path)
        lib.zb_init.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, _U64, ctypes.c_int, _U64, _U64,
                                ctypes.c_double]
        lib.zb_last_error.restype = ctypes.c_char_p
        for name in ("zb_all_gather", "zb_reduce_scatter", "zb_all_reduce", "zb_all_to_all"):
            getattr(lib, name).argtypes = [_VP, _VP, _U64, _VP]
        lib.zb_window_bytes.restype = _U64
        lib.zb_set_path.argtypes = [ctypes.c_char_p]
        lib.zb_path_of.argtypes = [ctypes.c_int, _VP, _VP, _U64]
        self._lib = lib
        self._call(lib.zb_init(rank, nranks, root_address.encode(), run_id, device, small_heap_bytes,
                               large_heap_bytes, float(timeout_s)))
        self.window_bytes = lib.zb_window_bytes()
        self._alloc = torch.cuda.memory.CUDAPluggableAllocator(lib_path, "zb_alloc", "zb_free")
        self._pool = torch.cuda.MemPool(self._alloc.allocator())

    def _call(self, rc):
        if rc != 0:
            raise ZeroBufError(self._lib.zb_last_error().decode(errors="replace"))

    def pool(self):
        """Context manager: tensors created inside come from this rank's window."""
        return torch.cuda.use_mem_pool(self._pool)

    @staticmethod
    def _stream():
        return _VP(torch.cuda.current_stream().cuda_stream)

    @staticmethod
    def _nbytes(t):
        if not t.is_contiguous():
            raise ZeroBufError("zerobuf: tensors must be contiguous")
        return t.numel() * t.element_size()

    def _expect(self, what, t, nbytes):
        if self._nbytes(t) != nbytes:
            raise ZeroBufError(f"zerobuf: {what} holds {self._nbytes(t)} B, expected {nbytes} B")

    def all_gather(self, output, input):
        b = self._nbytes(input)
        self._expect("all_gather output", output, self.nranks * b)
        self._call(self._lib.zb_all_gather(_VP(input.data_ptr()), _VP(output.data_ptr()), b, self._stream()))

    def reduce_scatter(self, output, input):
        self._float32(input, output)
        b = self._nbytes(output)
        self._expect("reduce_scatter input", input, self.nranks * b)
        self._call(self._lib.zb_reduce_scatter(_VP(input.data_ptr()), _VP(output.data_ptr()), b, self._stream()))

    def all_reduce(self, output, input=None):
        """Sum over ranks into `output`; in place when `input` is None or is `output`."""
        input = output if input is None else input
        self._float32(input, output)
        b = self._nbytes(output)
        self._expect("all_reduce input", input, b)
        self._call(self._lib.zb_all_reduce(_VP(input.data_ptr()), _VP(output.data_ptr()), b, self._stream()))

    def all_to_all(self, output, input):
        b = self._nbytes(input)
        if b % self.nranks:
            raise ZeroBufError(f"zerobuf: all_to_all input of {b} B is not {self.nranks} equal blocks")
        self._expect("all_to_all output", output, b)
        self._call(self._lib.zb_all_to_all(_VP(input.data_ptr()), _VP(output.data_ptr()), b // self.nranks,
                                           self._stream()))

    @staticmethod
    def _float32(*ts):
        for t in ts:
            if t.dtype != torch.float32:
                raise ZeroBufError(f"zerobuf: reductions are float32 sums, got {t.dtype}")

    def set_path(self, path):
        """Pins later calls to "ll", "direct" or "program", or "auto" (by size, the default)."""
        self._call(self._lib.zb_set_path(path.encode()))

    def path_of(self, op_code, input, output, nbytes):
        """0 flag program, 1 LL, 2 direct: the path a call (op 0 all-gather, 1 reduce-scatter,
        2 all-reduce, 3 all-to-all; nbytes as the C ABI counts them) would take."""
        p = self._lib.zb_path_of(op_code, _VP(input.data_ptr()), _VP(output.data_ptr()), nbytes)
        if p < 0:
            self._call(p)
        return p

    def check(self):
        """Raises ZeroBufError if any kernel so far timed out (does not wait)."""
        self._call(self._lib.zb_check())

    def close(self):
        """Tears the communicator down: unmaps the peers' windows and this rank's window. Tensors
        from pool() must be gone first."""
        torch.cuda.synchronize()
        self._pool = None
        torch.cuda.empty_cache()
        self._lib.zb_finalize()
