// The C ABI of libzerobuf-railcheck.so (zerobuf_abi.h) over one process-wide Communicator.
// PyTorch may call zb_alloc / zb_free from any thread; every entry point takes the lock.
#include "backends/hw/cuda/zerobuf/zerobuf_abi.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "backends/hw/cuda/zerobuf/communicator.hpp"

namespace {

using railcheck::Error;
using railcheck::hw::zerobuf::Communicator;
using railcheck::zerobuf::CollKind;

constexpr std::uint64_t kDefaultSmallHeap = 32ULL << 20;
constexpr std::uint64_t kDefaultLargeHeap = 384ULL << 20;

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
  // The defaults keep the window (tensors included) under what an NCCL communicator takes on its
  // own on 2 H200s (docs/zerobuf.md, Memory); a larger working set asks for more.
  o.sma.small_heap_bytes = small_heap_bytes ? small_heap_bytes : kDefaultSmallHeap;
  o.sma.large_heap_bytes = large_heap_bytes ? large_heap_bytes : kDefaultLargeHeap;
  o.timeout = railcheck::from_seconds(timeout_s);
  auto env_bytes = [](const char* name, std::uint64_t& to) -> bool {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == 0) return true;
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v, &end, 10);
    if (end == v || *end != 0) return false;
    to = x;
    return true;
  };
  std::uint64_t blocks = static_cast<std::uint64_t>(o.direct_max_blocks), fast = 1;
  std::uint64_t two_shot_min_ranks = o.fast.ll_two_shot_min_ranks;
  if (!env_bytes("ZEROBUF_LL_MAX_BYTES", o.fast.ll_max_send_bytes) || !env_bytes("ZEROBUF_DIRECT_BLOCKS", blocks) ||
      !env_bytes("ZEROBUF_FAST", fast) || !env_bytes("ZEROBUF_LL2_MAX_BYTES", o.fast.ll_two_shot_max_bytes) ||
      !env_bytes("ZEROBUF_LL2_MIN_RANKS", two_shot_min_ranks) || blocks == 0 ||
      blocks > railcheck::zerobuf::kMaxDirectBlocks || o.fast.ll_two_shot_max_bytes > (256ULL << 20))
    return fail(
        Error{"zerobuf: ZEROBUF_LL_MAX_BYTES, ZEROBUF_DIRECT_BLOCKS, ZEROBUF_FAST, ZEROBUF_LL2_MAX_BYTES or "
              "ZEROBUF_LL2_MIN_RANKS is not a plain number (or the blocks are not 1..256, or the two-shot limit "
              "is over 256 MiB)",
              "unset them for the defaults (docs/zerobuf.md, Thresholds)"});
  std::uint64_t ll_threads = static_cast<std::uint64_t>(o.ll_threads);
  std::uint64_t direct_units = static_cast<std::uint64_t>(o.direct_units_per_thread);
  if (!env_bytes("ZEROBUF_LL_THREADS", ll_threads) || !env_bytes("ZEROBUF_DIRECT_UNITS", direct_units) ||
      (ll_threads != 0 && (ll_threads < 32 || ll_threads > 512 || ll_threads % 32 != 0)) || direct_units < 1 ||
      direct_units > 64)
    return fail(Error{"zerobuf: ZEROBUF_LL_THREADS must be 0 (by size) or 32..512 in steps of 32, and "
                      "ZEROBUF_DIRECT_UNITS 1..64",
                      "unset them for the defaults (docs/zerobuf.md, Thresholds)"});
  o.ll_threads = static_cast<int>(ll_threads);
  o.direct_units_per_thread = static_cast<int>(direct_units);
  o.fast.ll_two_shot_min_ranks = static_cast<std::uint32_t>(two_shot_min_ranks);
  o.direct_max_blocks = static_cast<int>(blocks);
  o.fast.enabled = fast != 0;
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

int zb_set_path(const char* path) {
  std::lock_guard lock(g_mu);
  if (!g_comm) return no_comm("zb_set_path");
  const std::string p = path ? path : "";
  using railcheck::zerobuf::FastPath;
  if (p == "auto")
    g_comm->force_path(false, FastPath::Program);
  else if (p == "ll")
    g_comm->force_path(true, FastPath::Ll);
  else if (p == "direct")
    g_comm->force_path(true, FastPath::Direct);
  else if (p == "ll2")
    g_comm->force_path(true, FastPath::LlTwoShot);
  else if (p == "program")
    g_comm->force_path(true, FastPath::Program);
  else
    return fail(Error{"zerobuf: zb_set_path(\"" + p + "\")", "one of auto, ll, ll2, direct, program"});
  return 0;
}

int zb_path_of(int op, const void* in, const void* out, uint64_t bytes) {
  std::lock_guard lock(g_mu);
  if (!g_comm) return no_comm("zb_path_of");
  if (op < 0 || op > 3) return fail(Error{"zerobuf: zb_path_of with op " + std::to_string(op), "0 to 3"});
  return static_cast<int>(g_comm->path_for(static_cast<CollKind>(op), in, out, bytes));
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
