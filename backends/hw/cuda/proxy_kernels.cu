#include "backends/hw/cuda/proxy_kernels.cuh"

namespace railcheck::hw::cuda {

namespace {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Acquire at system scope (PTX ISA, memory consistency model): what the host wrote before its
// release store of this word (the landed data before the flag; the proxy's reads of a slot
// before the tail) is visible to this thread's later accesses. Generic addressing: the mapped
// allocation's device pointer is a UVA address.
__device__ __forceinline__ std::uint64_t load_acquire_sys(const volatile std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__global__ void proxy_round_trip_kernel(ProxyRoundTripArgs a) {
  // Every read of mapped host memory is a PCIe round trip (~1 us), so the kernel keeps its own
  // copies: head lives in a register (only this thread writes it) and the consumer's tail is
  // re-read only when the cached value says the ring is full. A transfer's descriptors are
  // published with one fence and one head store; a transfer larger than the free space is
  // published in parts, before waiting, so the proxy can free the slots it waits for.
  volatile RingHeader* ring = a.ring;
  volatile std::uint64_t* flags = a.flags;
  const std::uint64_t cap = ring->capacity;
  std::uint64_t head = ring->head;
  std::uint64_t tail_seen = ring->tail;
  const bool stamp = a.bytes_per_write >= 8;
  for (std::uint32_t it = 0; it < a.iterations; ++it) {
    const std::uint64_t t0 = global_ns();
    const std::uint64_t expect_seq = head;
    for (std::uint32_t w = 0; w < a.writes_per_transfer; ++w) {
      if (stamp) *reinterpret_cast<volatile std::uint64_t*>(a.src + std::uint64_t(w) * a.bytes_per_write) = it + 1;
      if (head - tail_seen >= cap) {
        __threadfence_system();  // the slots (and stamps) before the head that publishes them
        ring->head = head;
        do {
          tail_seen = load_acquire_sys(&ring->tail);
        } while (head - tail_seen >= cap);
      }
      WriteDescriptor d;
      d.seq = head;
      d.local_offset = static_cast<std::uint64_t>(w) * a.bytes_per_write;
      d.remote_offset = static_cast<std::uint64_t>(w) * a.bytes_per_write;
      d.length = a.bytes_per_write;
      d.imm = it;
      d.expect = w == 0 ? a.writes_per_transfer : 0;
      d.flag_slot = 0;
      // Three 16-byte write-through stores (st.global.wt: straight to system memory) rather than
      // seven field stores; their order among themselves does not matter, the fence below
      // orders all of them before the head.
      const uint4* v = reinterpret_cast<const uint4*>(&d);
      uint4* slot = reinterpret_cast<uint4*>(a.slots + (head & (cap - 1)));
#pragma unroll
      for (int k = 0; k < int(sizeof(WriteDescriptor) / sizeof(uint4)); ++k) __stwt(slot + k, v[k]);
      ++head;
    }
    __threadfence_system();
    ring->head = head;
    while (load_acquire_sys(&flags[0]) != expect_seq + 1) {
    }
    if (a.out_ns) a.out_ns[it] = global_ns() - t0;  // the check below reads over PCIe: not timed
    for (std::uint32_t w = 0; stamp && w < a.writes_per_transfer; ++w)
      if (*reinterpret_cast<const volatile std::uint64_t*>(a.dst + std::uint64_t(w) * a.bytes_per_write) != it + 1)
        ++*a.errors;
  }
}

__global__ void ping_pong_kernel(volatile std::uint64_t* ping, volatile std::uint64_t* pong, std::uint32_t iterations,
                                 std::uint64_t* out_ns) {
  for (std::uint32_t it = 1; it <= iterations; ++it) {
    const std::uint64_t t0 = global_ns();
    *ping = it;
    __threadfence_system();
    while (load_acquire_sys(pong) != it) {  // the same load as the proxy kernel's flag poll
    }
    if (out_ns) out_ns[it - 1] = global_ns() - t0;
  }
}

}  // namespace

int launch_proxy_round_trip(const ProxyRoundTripArgs& a) {
  proxy_round_trip_kernel<<<1, 1>>>(a);
  return static_cast<int>(cudaGetLastError());
}

int launch_ping_pong(std::uint64_t* ping, std::uint64_t* pong, std::uint32_t iterations, std::uint64_t* out_ns) {
  ping_pong_kernel<<<1, 1>>>(ping, pong, iterations, out_ns);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace railcheck::hw::cuda
