/* libzerobuf-railcheck.so: the zero-buffer collectives for PyTorch (issue 16 item 3).
 *
 *   zb_alloc / zb_free     PyTorch's pluggable-allocator pair
 *                          (torch.cuda.memory.CUDAPluggableAllocator(path, "zb_alloc", "zb_free")):
 *                          blocks of this rank's window, from the SMA
 *   zb_init / zb_finalize  one communicator per process
 *   zb_all_gather ...      collectives on pointers inside the window (tensor.data_ptr()),
 *                          queued on `stream` (torch.cuda.current_stream().cuda_stream)
 *
 * Every int-returning call returns 0 on success and -1 on error; zb_last_error() then holds one
 * line saying what failed and what to do. scripts/gpu/zerobuf_torch.py wraps this for Python. */
#pragma once
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_API __attribute__((visibility("default")))

/* root_address: "<IPv4>:<port>", opened by rank 0. The environment tunes the fast paths (same on
 * every rank): ZEROBUF_LL_MAX_BYTES (LL while a rank pushes at most this much to its peers; it also
 * sizes the LL area; default 1 MiB), ZEROBUF_DIRECT_BLOCKS (the direct kernel's blocks, default 128,
 * at most the GPU's multiprocessors: ranks on different GPU models must set it to the smallest
 * count), ZEROBUF_FAST=0 (flag program only), ZEROBUF_LL2_MAX_BYTES (all-reduces past one-shot LL up
 * to this size take the LL two-shot; default 0: off, it lost on 2 and 4 GPUs; it also sizes the LL area)
 * ZEROBUF_LL2_MIN_RANKS (the fewest ranks it applies to, default 3), ZEROBUF_DIRECT_UNITS (16-byte
 * units a direct-kernel thread moves before a block is added, default 2) and ZEROBUF_LL_THREADS
 * (threads of an LL block, default 0: 256 or 512 by size). run_id: same on every
 * rank, 0 for the default.
 * A heap size of 0 takes the default (32 MiB small, 384 MiB large). timeout_s: a flag wait longer than this fails the
 * communicator (zbccl seed §8.2). */
ZB_API int zb_init(int rank, int nranks, const char* root_address, uint64_t run_id, int device,
                   uint64_t small_heap_bytes, uint64_t large_heap_bytes, double timeout_s);
ZB_API const char* zb_last_error(void);
ZB_API void* zb_alloc(ssize_t size, int device, void* stream);
ZB_API void zb_free(void* ptr, ssize_t size, int device, void* stream);
/* bytes: per rank (all-gather input, reduce-scatter output), per peer block (all-to-all), or the
 * whole buffer (all-reduce; input == output is in place). Reductions are float32 sums. */
ZB_API int zb_all_gather(const void* input, void* output, uint64_t bytes, void* stream);
ZB_API int zb_reduce_scatter(const void* input, void* output, uint64_t bytes, void* stream);
ZB_API int zb_all_reduce(const void* input, void* output, uint64_t bytes, void* stream);
ZB_API int zb_all_to_all(const void* input, void* output, uint64_t bytes, void* stream);
/* 0 while no kernel has timed out; -1 with the timeout's error once one has. Does not wait. */
ZB_API int zb_check(void);
/* Pins every later call to one path, for measuring: "ll", "ll2", "direct", "program", or "auto" (the
 * default: by size, docs/zerobuf.md "Thresholds"). A call the pinned path cannot take (size,
 * alignment) takes the flag program. Every rank must pin the same path. */
ZB_API int zb_set_path(const char* path);
/* The path a call would take: 0 flag program, 1 LL, 2 direct, 3 LL two-shot; -1 on error. op: 0 all-gather,
 * 1 reduce-scatter, 2 all-reduce, 3 all-to-all. */
ZB_API int zb_path_of(int op, const void* input, const void* output, uint64_t bytes);
ZB_API uint64_t zb_window_bytes(void);
ZB_API int zb_finalize(void);

#ifdef __cplusplus
}
#endif
