#include <cooperative_groups.h>

#include "backends/hw/cuda/zerobuf/flag_kernels.cuh"

namespace railcheck::hw::zerobuf {
namespace {

namespace cg = cooperative_groups;
using railcheck::zerobuf::FlagKind;
using railcheck::zerobuf::FlagSlot;
using railcheck::zerobuf::FlagStep;
using railcheck::zerobuf::Reduce;
using railcheck::zerobuf::StepKind;

__device__ __forceinline__ std::uint64_t load_acquire_sys(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release_sys(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ bool aligned16(const void* a, const void* b, std::uint64_t n) {
  return ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) | n) & 15) == 0;
}

// dst[i] = src[i] (or dst[i] += src[i] as f32), shared by every thread of the grid.
__device__ void move(char* dst, const char* src, std::uint64_t n, Reduce reduce) {
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t nthreads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  if (reduce == Reduce::SumF32) {
    if (aligned16(dst, src, n)) {
      auto* d = reinterpret_cast<float4*>(dst);
      const auto* s = reinterpret_cast<const float4*>(src);
      for (std::uint64_t i = tid; i < n / 16; i += nthreads) {
        float4 a = d[i];
        const float4 b = s[i];
        a.x += b.x;
        a.y += b.y;
        a.z += b.z;
        a.w += b.w;
        d[i] = a;
      }
    } else {
      auto* d = reinterpret_cast<float*>(dst);
      const auto* s = reinterpret_cast<const float*>(src);
      for (std::uint64_t i = tid; i < n / 4; i += nthreads) d[i] += s[i];
    }
    return;
  }
  if (aligned16(dst, src, n)) {
    auto* d = reinterpret_cast<uint4*>(dst);
    const auto* s = reinterpret_cast<const uint4*>(src);
    for (std::uint64_t i = tid; i < n / 16; i += nthreads) d[i] = s[i];
  } else {
    for (std::uint64_t i = tid; i < n; i += nthreads) dst[i] = src[i];
  }
}

__device__ FlagSlot* slot_in(char* window, FlagKind k, std::uint32_t from, std::uint32_t nranks) {
  return reinterpret_cast<FlagSlot*>(window + railcheck::zerobuf::flag_slot_offset(k, from, nranks));
}

// Thread 0 of block 0: spin until the slot reaches the step's epoch or the deadline passes.
__device__ void wait_flag(const FlagStep& s, std::uint32_t pc, const KernelArgs& a) {
  FlagSlot* slot = slot_in(a.local, s.flag, s.peer, a.nranks);
  const std::uint64_t start = global_ns();
  std::uint32_t backoff = 32;
  for (;;) {
    const std::uint64_t seen = load_acquire_sys(&slot->epoch);
    if (railcheck::zerobuf::flag_satisfies(seen, s.epoch)) {
      a.scratch->published[static_cast<int>(s.flag)][s.peer] =
          *reinterpret_cast<volatile std::uint64_t*>(&slot->offset);
      return;
    }
    const std::uint64_t waited = global_ns() - start;
    if (waited >= a.timeout_ns) {
      a.scratch->failed = 1;
      if (atomicCAS(&a.scratch->claimed, 0U, 1U) == 0U) {
        a.record->pc = pc;
        a.record->observed = seen;
        a.record->waited_ns = waited;
        a.record->call_no = a.call_no;
        __threadfence_system();
        *reinterpret_cast<volatile std::uint32_t*>(&a.record->state) = 2;
      }
      return;
    }
    __nanosleep(backoff);
    if (backoff < 1024) backoff *= 2;
  }
}

__global__ void __launch_bounds__(kProgramThreads)
    flag_program_kernel(const DeviceProgram program, const KernelArgs a) {
  cg::grid_group grid = cg::this_grid();
  const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
  if (*reinterpret_cast<volatile std::uint32_t*>(&a.scratch->failed)) return;
  for (std::uint32_t pc = 0; pc < program.nsteps; ++pc) {
    const FlagStep& s = program.steps[pc];
    switch (s.kind) {
      case StepKind::Post:
        if (leader) {
          FlagSlot* slot = slot_in(a.peers[s.peer], s.flag, a.rank, a.nranks);
          __threadfence_system();
          *reinterpret_cast<volatile std::uint64_t*>(&slot->offset) = s.post_offset;
          store_release_sys(&slot->epoch, s.epoch);
        }
        break;
      case StepKind::Wait:
        if (leader) wait_flag(s, pc, a);
        grid.sync();
        if (*reinterpret_cast<volatile std::uint32_t*>(&a.scratch->failed)) return;
        break;
      case StepKind::Write: {
        char* dst = a.peers[s.peer] + a.scratch->published[static_cast<int>(FlagKind::Ready)][s.peer] + s.remote_add;
        move(dst, a.local + s.local_offset, s.bytes, Reduce::None);
        __threadfence_system();
        grid.sync();
        break;
      }
      case StepKind::Read: {
        const char* src =
            a.peers[s.peer] + a.scratch->published[static_cast<int>(FlagKind::Posted)][s.peer] + s.remote_add;
        move(a.local + s.local_offset, src, s.bytes, s.reduce);
        __threadfence_system();
        grid.sync();
        break;
      }
      case StepKind::Local:
        move(a.local + s.local_offset, a.local + s.src_offset, s.bytes, Reduce::None);
        __threadfence_system();
        grid.sync();
        break;
    }
  }
}

}  // namespace

int program_blocks(std::uint64_t max_bytes, int multiprocessors) {
  const std::uint64_t want = (max_bytes + (256U << 10) - 1) / (256U << 10);
  return static_cast<int>(want < 1 ? 1 : (want > static_cast<std::uint64_t>(multiprocessors) ? multiprocessors : want));
}

cudaError_t launch_program(const DeviceProgram& program, const KernelArgs& args, int blocks, cudaStream_t stream) {
  void* params[] = {const_cast<DeviceProgram*>(&program), const_cast<KernelArgs*>(&args)};
  return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&flag_program_kernel), dim3(blocks),
                                     dim3(kProgramThreads), params, 0, stream);
}

}  // namespace railcheck::hw::zerobuf
