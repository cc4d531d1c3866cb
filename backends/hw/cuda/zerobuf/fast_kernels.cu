#include "backends/hw/cuda/zerobuf/fast_kernels.cuh"

namespace railcheck::hw::zerobuf {
namespace {

using railcheck::zerobuf::BarrierSlot;
using railcheck::zerobuf::FastOp;
using railcheck::zerobuf::FastPath;
using railcheck::zerobuf::LlLine;
using railcheck::zerobuf::Span;

__device__ __forceinline__ std::uint64_t now_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void store_line(LlLine* p, std::uint32_t d0, std::uint32_t d1, std::uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(d0), "r"(flag), "r"(d1), "r"(flag)
               : "memory");
}

__device__ __forceinline__ LlLine load_line(const LlLine* p) {
  LlLine l;
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(l.data0), "=r"(l.flag0), "=r"(l.data1), "=r"(l.flag1)
               : "l"(p)
               : "memory");
  return l;
}

__device__ __forceinline__ std::uint64_t load_acquire(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ bool comm_failed(const FastArgs& a) {
  return *reinterpret_cast<volatile std::uint32_t*>(&a.scratch->failed) != 0;
}

// The first timeout of a communicator fills the record the host reads (check()); every later
// wait sees `failed` and gives up at once.
__device__ void report_timeout(const FastArgs& a, FastPath path, std::uint32_t peer, std::uint64_t expected,
                               std::uint64_t observed, std::uint64_t waited) {
  a.scratch->failed = 1;
  if (atomicCAS(&a.scratch->claimed, 0U, 1U) != 0U) return;
  a.record->pc = 0;
  a.record->path = static_cast<std::uint32_t>(path);
  a.record->peer = peer;
  a.record->op = static_cast<std::uint32_t>(a.op);
  a.record->expected = expected;
  a.record->observed = observed;
  a.record->waited_ns = waited;
  a.record->call_no = expected;
  __threadfence_system();
  *reinterpret_cast<volatile std::uint32_t*>(&a.record->state) = 2;
}

// ---- LL ----

// Spins until the line carries `epoch` in both halves. False: a timeout (reported) or the
// communicator failed elsewhere.
__device__ bool wait_line(const LlLine* p, std::uint32_t epoch, LlLine& out, const FastArgs& a, std::uint32_t peer) {
  out = load_line(p);
  if (railcheck::zerobuf::ll_line_ready(out, epoch)) return true;
  const std::uint64_t start = now_ns();
  for (std::uint32_t spins = 1;; ++spins) {
    out = load_line(p);
    if (railcheck::zerobuf::ll_line_ready(out, epoch)) return true;
    if ((spins & 1023U) == 0) {
      if (comm_failed(a)) return false;
      const std::uint64_t waited = now_ns() - start;
      if (waited >= a.timeout_ns) {
        report_timeout(a, FastPath::Ll, peer, epoch, out.flag0 != epoch ? out.flag0 : out.flag1, waited);
        return false;
      }
    }
  }
}

// Words 2i and 2i+1 of a piece of `words` 4-byte words (the second is 0 past the end).
__device__ __forceinline__ void read_words(const char* base, std::uint64_t i, std::uint64_t words, std::uint32_t& w0,
                                           std::uint32_t& w1) {
  const auto* w = reinterpret_cast<const std::uint32_t*>(base);
  w0 = w[2 * i];
  w1 = 2 * i + 1 < words ? w[2 * i + 1] : 0U;
}

__device__ __forceinline__ void write_words(char* base, std::uint64_t i, std::uint64_t words, std::uint32_t w0,
                                            std::uint32_t w1) {
  auto* w = reinterpret_cast<std::uint32_t*>(base);
  w[2 * i] = w0;
  if (2 * i + 1 < words) w[2 * i + 1] = w1;
}

__global__ void __launch_bounds__(kLlThreads) ll_kernel(const FastArgs a) {
  __shared__ int failed_at_start;
  if (threadIdx.x == 0) failed_at_start = comm_failed(a);
  __syncthreads();
  if (failed_at_start) return;  // the whole block leaves together
  const std::uint32_t epoch =
      railcheck::zerobuf::ll_next_epoch(*reinterpret_cast<volatile std::uint32_t*>(&a.state->ll_epoch));
  const std::uint32_t parity = railcheck::zerobuf::ll_parity(epoch);
  const std::uint32_t n = a.nranks, me = a.rank;
  const std::uint64_t lines = railcheck::zerobuf::ll_lines(a.bytes), words = a.bytes / 4;
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t nthreads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const char* in = a.local + a.input_offset;
  char* out = a.local + a.output_offset;

  // Send: every line this thread owns, to every peer. Line i is sent and later received by the
  // same thread, so an in-place call reads its input line before it overwrites it.
  for (std::uint32_t k = 1; k < n; ++k) {
    const std::uint32_t p = (me + k) % n;
    const Span piece = railcheck::zerobuf::piece_to(a.op, a.bytes, p);
    auto* slot = reinterpret_cast<LlLine*>(a.peers[p] + a.ll_area_offset +
                                           railcheck::zerobuf::ll_slot_offset(parity, me, n, a.ll_slot_lines));
    for (std::uint64_t i = tid; i < lines; i += nthreads) {
      std::uint32_t w0, w1;
      read_words(in + piece.offset, i, words, w0, w1);
      store_line(slot + i, w0, w1, epoch);
    }
  }

  // Receive.
  bool ok = true;
  const bool reduce = railcheck::zerobuf::fast_reduces(a.op);
  for (std::uint64_t i = tid; ok && i < lines; i += nthreads) {
    float s0 = 0.0F, s1 = 0.0F;
    for (std::uint32_t q = 0; q < n; ++q) {
      std::uint32_t w0, w1;
      if (q == me) {
        read_words(in + railcheck::zerobuf::piece_to(a.op, a.bytes, me).offset, i, words, w0, w1);
      } else {
        const auto* slot = reinterpret_cast<const LlLine*>(
            a.local + a.ll_area_offset + railcheck::zerobuf::ll_slot_offset(parity, q, n, a.ll_slot_lines));
        LlLine l;
        if (!wait_line(slot + i, epoch, l, a, q)) {
          ok = false;
          break;
        }
        w0 = l.data0;
        w1 = l.data1;
        // Cleared once taken (fast_path.hpp): the sender writes this line again only two calls on,
        // after this kernel has ended.
        *const_cast<LlLine*>(slot + i) = LlLine{0, 0, 0, 0};
      }
      if (reduce) {
        // Rank order from rank 0 on every rank: every rank holds the same bits.
        s0 = q == 0 ? __uint_as_float(w0) : s0 + __uint_as_float(w0);
        s1 = q == 0 ? __uint_as_float(w1) : s1 + __uint_as_float(w1);
      } else {
        write_words(out + railcheck::zerobuf::piece_at(a.op, a.bytes, q).offset, i, words, w0, w1);
      }
    }
    if (ok && reduce) write_words(out, i, words, __float_as_uint(s0), __float_as_uint(s1));
  }

  // The last block to finish records the epoch as used; the next call (stream order) reads it.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&a.state->ll_blocks_done, 1U) == gridDim.x - 1) {
      a.state->ll_blocks_done = 0;
      a.state->ll_epoch = epoch;
      __threadfence();
    }
  }
}

// ---- LL two-shot (all-reduce; fast_path.hpp, "LL two-shot") ----

__device__ __forceinline__ LlLine* ll_slot(char* window, const FastArgs& a, std::uint32_t parity,
                                           std::uint32_t sender) {
  return reinterpret_cast<LlLine*>(window + a.ll_area_offset +
                                   railcheck::zerobuf::ll_slot_offset(parity, sender, a.nranks, a.ll_slot_lines));
}

__global__ void __launch_bounds__(kLlThreads) ll_two_shot_kernel(const FastArgs a) {
  __shared__ int failed_at_start;
  if (threadIdx.x == 0) failed_at_start = comm_failed(a);
  __syncthreads();
  if (failed_at_start) return;
  const std::uint32_t counter = *reinterpret_cast<volatile std::uint32_t*>(&a.state->ll_epoch);
  const std::uint32_t e1 = railcheck::zerobuf::ll_two_shot_epoch1(counter);
  const std::uint32_t e2 = railcheck::zerobuf::ll_two_shot_epoch2(counter);
  const std::uint32_t n = a.nranks, me = a.rank;
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t nthreads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const char* in = a.local + a.input_offset;
  char* out = a.local + a.output_offset;
  const Span mine = railcheck::zerobuf::ll_two_shot_part(a.bytes, me, n);
  const std::uint64_t my_lines = railcheck::zerobuf::ll_lines(mine.bytes), my_words = mine.bytes / 4;

  // Phase 1 send: line i of part p of my input to rank p. Line i of part q is sent (here) and
  // later overwritten in place (phase 2 receive) by the same thread.
  for (std::uint32_t k = 1; k < n; ++k) {
    const std::uint32_t p = (me + k) % n;
    const Span part = railcheck::zerobuf::ll_two_shot_part(a.bytes, p, n);
    LlLine* slot = ll_slot(a.peers[p], a, railcheck::zerobuf::ll_parity(e1), me);
    const std::uint64_t lines = railcheck::zerobuf::ll_lines(part.bytes), words = part.bytes / 4;
    for (std::uint64_t i = tid; i < lines; i += nthreads) {
      std::uint32_t w0, w1;
      read_words(in + part.offset, i, words, w0, w1);
      store_line(slot + i, w0, w1, e1);
    }
  }

  // Phase 1 receive: every peer's line i of my part, summed in rank order into my output part.
  bool ok = true;
  for (std::uint64_t i = tid; ok && i < my_lines; i += nthreads) {
    float s0 = 0.0F, s1 = 0.0F;
    for (std::uint32_t q = 0; q < n; ++q) {
      std::uint32_t w0, w1;
      if (q == me) {
        read_words(in + mine.offset, i, my_words, w0, w1);
      } else {
        LlLine* line = ll_slot(a.local, a, railcheck::zerobuf::ll_parity(e1), q) + i;
        LlLine l;
        if (!wait_line(line, e1, l, a, q)) {
          ok = false;
          break;
        }
        w0 = l.data0;
        w1 = l.data1;
        *line = LlLine{0, 0, 0, 0};
      }
      s0 = q == 0 ? __uint_as_float(w0) : s0 + __uint_as_float(w0);
      s1 = q == 0 ? __uint_as_float(w1) : s1 + __uint_as_float(w1);
    }
    if (ok) write_words(out + mine.offset, i, my_words, __float_as_uint(s0), __float_as_uint(s1));
  }
  // The clears above before the phase-2 lines a peer answers with its next phase (fast_path.hpp).
  asm volatile("fence.acq_rel.sys;" ::: "memory");

  // Phase 2 send: my summed lines to every peer (this thread's own lines: it summed them).
  for (std::uint64_t i = tid; ok && i < my_lines; i += nthreads) {
    std::uint32_t w0, w1;
    read_words(out + mine.offset, i, my_words, w0, w1);
    for (std::uint32_t k = 1; k < n; ++k) {
      const std::uint32_t p = (me + k) % n;
      store_line(ll_slot(a.peers[p], a, railcheck::zerobuf::ll_parity(e2), me) + i, w0, w1, e2);
    }
  }

  // Phase 2 receive: every peer's summed part into my output.
  for (std::uint32_t k = 1; ok && k < n; ++k) {
    const std::uint32_t q = (me + k) % n;
    const Span part = railcheck::zerobuf::ll_two_shot_part(a.bytes, q, n);
    LlLine* slot = ll_slot(a.local, a, railcheck::zerobuf::ll_parity(e2), q);
    const std::uint64_t lines = railcheck::zerobuf::ll_lines(part.bytes), words = part.bytes / 4;
    for (std::uint64_t i = tid; ok && i < lines; i += nthreads) {
      LlLine l;
      if (!wait_line(slot + i, e2, l, a, q)) {
        ok = false;
        break;
      }
      slot[i] = LlLine{0, 0, 0, 0};
      write_words(out + part.offset, i, words, l.data0, l.data1);
    }
  }

  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(&a.state->ll_blocks_done, 1U) == gridDim.x - 1) {
      a.state->ll_blocks_done = 0;
      a.state->ll_epoch = e2;
      __threadfence();
    }
  }
}

// ---- Direct ----

__device__ bool wait_epoch(const std::uint64_t* p, std::uint64_t epoch, const FastArgs& a, std::uint32_t peer) {
  std::uint64_t seen = load_acquire(p);
  if (seen >= epoch) return true;
  const std::uint64_t start = now_ns();
  std::uint32_t backoff = 8;
  for (std::uint32_t spins = 0;; ++spins) {
    seen = load_acquire(p);
    if (seen >= epoch) return true;
    if (comm_failed(a)) return false;
    const std::uint64_t waited = now_ns() - start;
    if (waited >= a.timeout_ns) {
      report_timeout(a, FastPath::Direct, peer, epoch, seen, waited);
      return false;
    }
    // A peer is usually a microsecond or two behind: spin that long before sleeping, since a
    // sleep of up to 256 ns would land on the critical path of every barrier.
    if (spins >= 64) {
      __nanosleep(backoff);
      if (backoff < 256) backoff *= 2;
    }
  }
}

__device__ __forceinline__ float4 add4(float4 x, float4 y) {
  return make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

// Unit u of every rank's input at `offset`, summed in rank order from rank 0 (every rank holds
// the same bits). The loads go to every peer at once, not peer after peer: with every thread of
// the grid in step, a peer-major order would keep one NVLink busy at a time (measured on 4 x H200:
// all-reduce 16 MiB 1.24 x slower that way than this).
__device__ __forceinline__ float4 sum_unit(const float4* const (&src)[kMaxRanks], std::uint32_t n, std::uint64_t u) {
  float4 v[kMaxRanks];
#pragma unroll
  for (std::uint32_t q = 0; q < kMaxRanks; ++q)
    if (q < n) v[q] = src[q][u];
  float4 s = v[0];
#pragma unroll
  for (std::uint32_t q = 1; q < kMaxRanks; ++q)
    if (q < n) s = add4(s, v[q]);
  return s;
}

__global__ void __launch_bounds__(kDirectThreads) direct_kernel(const FastArgs a) {
  __shared__ std::uint64_t in_at[kMaxRanks], out_at[kMaxRanks];
  __shared__ std::uint64_t call;
  __shared__ int ok;
  const std::uint32_t n = a.nranks, me = a.rank, t = threadIdx.x;
  if (t == 0) {
    ok = !comm_failed(a);
    call = *reinterpret_cast<volatile std::uint64_t*>(&a.state->direct_calls);
    in_at[me] = a.input_offset;
    out_at[me] = a.output_offset;
  }
  __syncthreads();
  if (!ok) return;
  const std::uint64_t start_epoch = railcheck::zerobuf::direct_start_epoch(call);
  const std::uint64_t end_epoch = railcheck::zerobuf::direct_end_epoch(call);
  auto slot_of = [&](char* window, std::uint32_t sender) {
    return reinterpret_cast<BarrierSlot*>(window + a.barrier_area_offset +
                                          railcheck::zerobuf::barrier_slot_offset(blockIdx.x, sender, n));
  };

  // Start: my buffers are ready (stream order) and here they are; wait for every peer's.
  if (t < n && t != me) {
    BarrierSlot* theirs = slot_of(a.peers[t], me);
    *reinterpret_cast<volatile std::uint64_t*>(&theirs->input_offset) = a.input_offset;
    *reinterpret_cast<volatile std::uint64_t*>(&theirs->output_offset) = a.output_offset;
    store_release(&theirs->epoch, start_epoch);
    BarrierSlot* mine = slot_of(a.local, t);
    if (wait_epoch(&mine->epoch, start_epoch, a, t)) {
      in_at[t] = *reinterpret_cast<volatile std::uint64_t*>(&mine->input_offset);
      out_at[t] = *reinterpret_cast<volatile std::uint64_t*>(&mine->output_offset);
    } else {
      ok = 0;
    }
  }
  __syncthreads();
  if (!ok) return;

  // Data: this block's share, grid-stride over 16-byte units (the same units on every rank).
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + t;
  const std::uint64_t nthreads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  switch (a.op) {
    case FastOp::AllGather:
    case FastOp::AllToAll: {
      // Unit by unit to every rank in turn (my own copy last), so the local copy overlaps the
      // NVLink writes and every link carries a share at once; kDirectUnroll units a thread at a
      // time, their loads in flight before the first store.
      const std::uint64_t units = a.bytes / 16;
      const std::uint64_t to = railcheck::zerobuf::piece_at(a.op, a.bytes, me).offset;
      const uint4* src[kMaxRanks];
      uint4* dst[kMaxRanks];
#pragma unroll
      for (std::uint32_t k = 0; k < kMaxRanks; ++k) {
        if (k >= n) break;
        const std::uint32_t p = (me + 1 + k) % n;
        src[k] = reinterpret_cast<const uint4*>(a.local + a.input_offset +
                                                railcheck::zerobuf::piece_to(a.op, a.bytes, p).offset);
        dst[k] = reinterpret_cast<uint4*>(a.peers[p] + out_at[p] + to);
      }
      for (std::uint64_t u0 = tid; u0 < units; u0 += nthreads * kDirectUnroll) {
#pragma unroll
        for (int j = 0; j < kDirectUnroll; ++j) {
          const std::uint64_t u = u0 + j * nthreads;
          if (u >= units) break;
          uint4 v[kMaxRanks];
#pragma unroll
          for (std::uint32_t k = 0; k < kMaxRanks; ++k)
            if (k < n) v[k] = src[k][u];
#pragma unroll
          for (std::uint32_t k = 0; k < kMaxRanks; ++k)
            if (k < n) dst[k][u] = v[k];
        }
      }
      break;
    }
    case FastOp::ReduceScatter:
    case FastOp::AllReduce: {
      // Reduce-scatter: my output block, summed from every rank's input. All-reduce: my part,
      // summed, then written into every rank's output (mine included).
      const bool all = a.op == FastOp::AllReduce;
      const Span part = all ? railcheck::zerobuf::direct_part(a.bytes, me, n) : Span{me * a.bytes, a.bytes};
      const std::uint64_t units = part.bytes / 16;
      const float4* src[kMaxRanks];
      float4* dst[kMaxRanks];
#pragma unroll
      for (std::uint32_t q = 0; q < kMaxRanks; ++q) {
        if (q >= n) break;
        src[q] = reinterpret_cast<const float4*>(a.peers[q] + in_at[q] + part.offset);
        const std::uint32_t p = (me + q) % n;  // the writes start at my own copy
        dst[q] = all ? reinterpret_cast<float4*>(a.peers[p] + out_at[p] + part.offset)
                     : reinterpret_cast<float4*>(a.local + a.output_offset);
      }
      const std::uint32_t writes = all ? n : 1;
      for (std::uint64_t u0 = tid; u0 < units; u0 += nthreads * kDirectUnroll) {
        float4 s[kDirectUnroll];
#pragma unroll
        for (int j = 0; j < kDirectUnroll; ++j) {
          const std::uint64_t u = u0 + j * nthreads;
          if (u < units) s[j] = sum_unit(src, n, u);
        }
#pragma unroll
        for (int j = 0; j < kDirectUnroll; ++j) {
          const std::uint64_t u = u0 + j * nthreads;
          if (u >= units) break;
#pragma unroll
          for (std::uint32_t k = 0; k < kMaxRanks; ++k)
            if (k < writes) dst[k][u] = s[j];
        }
      }
      break;
    }
  }

  // End: every store of this block issued, made visible, then announced; wait until every
  // peer's block is done with my buffers too.
  __syncthreads();
  if (t < n && t != me) {
    __threadfence_system();
    store_release(&slot_of(a.peers[t], me)->epoch, end_epoch);
    if (!wait_epoch(&slot_of(a.local, t)->epoch, end_epoch, a, t)) ok = 0;
  }
  __syncthreads();
  if (t == 0 && ok) {
    __threadfence();
    if (atomicAdd(&a.state->direct_blocks_done, 1U) == gridDim.x - 1) {
      a.state->direct_blocks_done = 0;
      a.state->direct_calls = call + 1;
      __threadfence();
    }
  }
}

}  // namespace

int ll_blocks(std::uint64_t piece_bytes, int multiprocessors, int threads) {
  const std::uint64_t lines = railcheck::zerobuf::ll_lines(piece_bytes);
  const auto per_block = static_cast<std::uint64_t>(threads < 32 ? 32 : threads);
  const std::uint64_t want = (lines + per_block - 1) / per_block;
  const std::uint64_t most = multiprocessors < 1 ? 1 : static_cast<std::uint64_t>(multiprocessors);
  return static_cast<int>(want < 1 ? 1 : (want > most ? most : want));
}

int ll_threads(std::uint64_t piece_bytes, int multiprocessors, int configured) {
  if (configured > 0) return configured;
  const std::uint64_t lines = railcheck::zerobuf::ll_lines(piece_bytes);
  const auto sms = static_cast<std::uint64_t>(multiprocessors < 1 ? 1 : multiprocessors);
  return lines <= 256 * sms ? 256 : kLlThreads;
}

int direct_blocks(FastOp op, std::uint64_t bytes, std::uint32_t nranks, int max_blocks, int units_per_thread) {
  const std::uint64_t work = op == FastOp::AllReduce ? bytes / nranks : bytes;
  const std::uint64_t per_block =
      static_cast<std::uint64_t>(kDirectThreads) * 16 * static_cast<std::uint64_t>(units_per_thread < 1 ? 1 : units_per_thread);
  const std::uint64_t want = (work + per_block - 1) / per_block;
  const std::uint64_t most =
      static_cast<std::uint64_t>(max_blocks < 1 ? 1
                                                : (max_blocks > static_cast<int>(railcheck::zerobuf::kMaxDirectBlocks)
                                                       ? static_cast<int>(railcheck::zerobuf::kMaxDirectBlocks)
                                                       : max_blocks));
  return static_cast<int>(want < 1 ? 1 : (want > most ? most : want));
}

cudaError_t launch_ll(const FastArgs& args, int blocks, int threads, cudaStream_t stream) {
  ll_kernel<<<blocks, threads, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launch_ll_two_shot(const FastArgs& args, int blocks, int threads, cudaStream_t stream) {
  ll_two_shot_kernel<<<blocks, threads, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launch_direct(const FastArgs& args, int blocks, cudaStream_t stream) {
  direct_kernel<<<blocks, kDirectThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace railcheck::hw::zerobuf
