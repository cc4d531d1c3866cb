"""NCCL at its best for small messages (issue 43): a second NCCL communicator whose buffers lie in
a symmetric window, so NCCL 2.28 may run its symmetric-memory kernels (src/device/symmetric/:
AllReduce_AGxLL_R, AllReduce_RSxLD_AGxST, AllGather_LL / _ST, ReduceScatter_LL / _LD; the
multicast variants need NVLS, which stays off on the lent machines).

Straight through NCCL's C API with ctypes, on the very libnccl.so that torch.distributed loaded:

    sym = NcclSym(store, rank, nranks, max_bytes)   # ncclCommInitRank, then two ncclMemAlloc
                                                    # buffers of max_bytes, each registered with
                                                    # ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC)
    sym.call("all_gather", sym.out[:m], sym.inp[:k])  # on torch's current stream (graph capture too)
    sym.close()

`sym.inp` / `sym.out` are float32 torch tensors over the registered buffers; the calls take views
of them (NCCL looks a pointer up in its windows, so a view at any offset is inside the window).
"""
import ctypes

import torch

NCCL_WIN_COLL_SYMMETRIC = 0x01
_FLOAT32, _SUM = 7, 0  # ncclFloat32, ncclSum (nccl.h)
_VP, _SZ, _INT = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int


class NcclError(RuntimeError):
    pass


class _UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


class _CudaArray:
    """A raw device pointer as __cuda_array_interface__, for torch.as_tensor."""

    def __init__(self, ptr, numel):
        self.__cuda_array_interface__ = {"shape": (numel,), "typestr": "<f4", "data": (ptr, False),
                                         "version": 3}


def load_nccl():
    """The libnccl.so this process already runs (torch's), found in /proc/self/maps, so both
    communicators use one library; else whatever the loader finds as libnccl.so.2."""
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "/libnccl.so" in path:
                return ctypes.CDLL(path), path
    return ctypes.CDLL("libnccl.so.2"), "libnccl.so.2"


class NcclSym:
    def __init__(self, store, rank, nranks, max_bytes, key="nccl_sym"):
        lib, self.lib_path = load_nccl()
        self._lib = lib
        for name in ("ncclGetUniqueId", "ncclCommInitRank", "ncclMemAlloc", "ncclMemFree", "ncclCommWindowRegister",
                     "ncclCommWindowDeregister", "ncclAllGather", "ncclReduceScatter", "ncclAllReduce",
                     "ncclAlltoAll", "ncclCommDestroy", "ncclGetVersion"):
            getattr(lib, name).restype = _INT
        lib.ncclGetErrorString.restype = ctypes.c_char_p
        lib.ncclCommInitRank.argtypes = [ctypes.POINTER(_VP), _INT, _UniqueId, _INT]
        lib.ncclMemAlloc.argtypes = [ctypes.POINTER(_VP), _SZ]
        lib.ncclCommWindowRegister.argtypes = [_VP, _VP, _SZ, ctypes.POINTER(_VP), _INT]
        lib.ncclAllGather.argtypes = [_VP, _VP, _SZ, _INT, _VP, _VP]
        lib.ncclReduceScatter.argtypes = [_VP, _VP, _SZ, _INT, _INT, _VP, _VP]
        lib.ncclAllReduce.argtypes = [_VP, _VP, _SZ, _INT, _INT, _VP, _VP]
        lib.ncclAlltoAll.argtypes = [_VP, _VP, _SZ, _INT, _VP, _VP]
        lib.ncclCommWindowDeregister.argtypes = [_VP, _VP]
        lib.ncclMemFree.argtypes = [_VP]
        lib.ncclCommDestroy.argtypes = [_VP]
        v = _INT()
        self._check(lib.ncclGetVersion(ctypes.byref(v)), "ncclGetVersion")
        self.version = v.value
        self.nranks = nranks
        uid = _UniqueId()
        if rank == 0:
            self._check(lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
            store.set(f"{key}/id", ctypes.string_at(ctypes.byref(uid), 128))  # .internal stops at a NUL
        else:
            raw = store.get(f"{key}/id")  # waits for rank 0
            ctypes.memmove(ctypes.byref(uid), raw, 128)
        comm = _VP()
        self._check(lib.ncclCommInitRank(ctypes.byref(comm), nranks, uid, rank), "ncclCommInitRank")
        self._comm = comm
        # Two buffers (input and output), each its own symmetric window; every rank the same size.
        self.window_bytes = -(-max_bytes // (2 << 20)) * (2 << 20)
        self._bufs, self._wins = [], []
        for _ in range(2):
            p = _VP()
            self._check(lib.ncclMemAlloc(ctypes.byref(p), self.window_bytes), "ncclMemAlloc")
            self._bufs.append(p)
            w = _VP()
            self._check(lib.ncclCommWindowRegister(comm, p, self.window_bytes, ctypes.byref(w),
                                                   NCCL_WIN_COLL_SYMMETRIC), "ncclCommWindowRegister")
            self._wins.append(w)
        numel = self.window_bytes // 4
        self.inp = torch.as_tensor(_CudaArray(self._bufs[0].value, numel), device="cuda")
        self.out = torch.as_tensor(_CudaArray(self._bufs[1].value, numel), device="cuda")

    def _check(self, rc, what):
        if rc != 0:
            raise NcclError(f"{what}: {self._lib.ncclGetErrorString(rc).decode(errors='replace')} (ncclResult {rc})")

    def call(self, op, out, inp):
        """As zerobuf_ops.nccl_call: all-reduce reduces `out` in place."""
        s = _VP(torch.cuda.current_stream().cuda_stream)
        lib, c = self._lib, self._comm
        if op == "all_gather":
            rc = lib.ncclAllGather(inp.data_ptr(), out.data_ptr(), inp.numel(), _FLOAT32, c, s)
        elif op == "reduce_scatter":
            rc = lib.ncclReduceScatter(inp.data_ptr(), out.data_ptr(), out.numel(), _FLOAT32, _SUM, c, s)
        elif op == "all_to_all":
            rc = lib.ncclAlltoAll(inp.data_ptr(), out.data_ptr(), inp.numel() // self.nranks, _FLOAT32, c, s)
        else:
            rc = lib.ncclAllReduce(out.data_ptr(), out.data_ptr(), out.numel(), _FLOAT32, _SUM, c, s)
        self._check(rc, op)

    def close(self):
        torch.cuda.synchronize()
        self.inp = self.out = None
        for w in self._wins:
            self._lib.ncclCommWindowDeregister(self._comm, w)
        for p in self._bufs:
            self._lib.ncclMemFree(p)
        self._lib.ncclCommDestroy(self._comm)
        self._wins, self._bufs = [], []
