// The C ABI of libzerobuf-railcheck.so (zerobuf_abi.h) over one process-wide Communicator.
// PyTorch may call zb_alloc / zb_free from any thread; every entry point takes the lock.
#include "backends/hw/cuda/zerobuf/zerobuf_abi.h"

#include <cmath>
#include <memory>
#include <mutex>
#include <string>

#include "backends/hw/cuda/zerobuf/communicator.hpp"

namespace {

using railcheck::Error;
using railcheck::hw::zerobuf::Communicator;
using railcheck::zerobuf::CollKind;

std::mutex g_mu;
std::unique_ptr<Communicator> g_comm;
std::string g_error;

int fail(const Error& e) {
  g_error = e.message();
  return -1;
}

int no_comm(const char* call) {
  g_error = std::string("zerobuf: ") + call + " before zb_init (call zb_init on every rank first)";
  return -1;
}

int collective(const char* name, CollKind kind, const void* in, void* out, std::uint64_t bytes, void* stream) {
  std::lock_guard lock(g_mu);
  if (!g_comm) return no_comm(name);
  auto r = g_comm->run(kind, in, out, bytes, static_cast<cudaStream_t>(stream));
  return r ? 0 : fail(r.error());
}

}  // namespace

extern "C" {

int zb_init(int rank, int nranks, const char* root_address, uint64_t run_id, int device, uint64_t small_heap_bytes,
            uint64_t large_heap_bytes, double timeout_s) {
  std::lock_guard lock(g_mu);
  if (g_comm) return fail(Error{"zerobuf: zb_init called twice", "call zb_finalize first"});
  if (rank < 0 || nranks <= 0 || root_address == nullptr || !(timeout_s > 0) || !std::isfinite(timeout_s))
    return fail(Error{"zerobuf: zb_init with a negative rank or nranks, no root address or a timeout that is not > 0",
                      "zb_init(rank, nranks, \"127.0.0.1:29501\", 0, device, 0, 0, 10.0)"});
  railcheck::hw::zerobuf::CommOptions o;
  o.rank = static_cast<std::uint32_t>(rank);
  o.nranks = static_cast<std::uint32_t>(nranks);
  o.root_address = root_address;
  o.run_id = run_id;
  o.device = device;
  if (small_heap_bytes) o.sma.small_heap_bytes = small_heap_bytes;
  if (large_heap_bytes) o.sma.large_heap_bytes = large_heap_bytes;
  o.timeout = railcheck::from_seconds(timeout_s);
  auto c = Communicator::create(o);
  if (!c) return fail(c.error());
  g_comm = std::move(c.value());
  return 0;
}

const char* zb_last_error(void) { return g_error.c_str(); }

void* zb_alloc(ssize_t size, int /*device*/, void* stream) {
  std::lock_guard lock(g_mu);
  if (!g_comm) {
    no_comm("zb_alloc");
    return nullptr;
  }
  if (size < 0) {
    fail(Error{"zerobuf: zb_alloc of a negative size", ""});
    return nullptr;
  }
  auto p = g_comm->alloc(static_cast<std::uint64_t>(size), static_cast<cudaStream_t>(stream));
  if (!p) {
    fail(p.error());
    return nullptr;  // PyTorch raises its out-of-memory error
  }
  return p.value();
}

// After zb_finalize the window is gone and so is every block: a late free is a no-op.
void zb_free(void* ptr, ssize_t /*size*/, int /*device*/, void* /*stream*/) {
  std::lock_guard lock(g_mu);
  if (!g_comm) return;
  if (auto r = g_comm->free(ptr); !r) fail(r.error());
}

int zb_all_gather(const void* in, void* out, uint64_t bytes, void* stream) {
  return collective("zb_all_gather", CollKind::AllGather, in, out, bytes, stream);
}
int zb_reduce_scatter(const void* in, void* out, uint64_t bytes, void* stream) {
  return collective("zb_reduce_scatter", CollKind::ReduceScatter, in, out, bytes, stream);
}
int zb_all_reduce(const void* in, void* out, uint64_t bytes, void* stream) {
  return collective("zb_all_reduce", CollKind::AllReduce, in, out, bytes, stream);
}
int zb_all_to_all(const void* in, void* out, uint64_t bytes, void* stream) {
  return collective("zb_all_to_all", CollKind::AllToAll, in, out, bytes, stream);
}

int zb_check(void) {
  std::lock_guard lock(g_mu);
  if (!g_comm) return no_comm("zb_check");
  auto r = g_comm->check();
  return r ? 0 : fail(r.error());
}

uint64_t zb_window_bytes(void) {
  std::lock_guard lock(g_mu);
  return g_comm ? g_comm->window_bytes() : 0;
}

int zb_finalize(void) {
  std::lock_guard lock(g_mu);
  g_comm.reset();
  return 0;
}

}  // extern "C"
