// ncclPrepareTasks for collectives, NCCL 2.28.9 (nccl228_prepare.hpp).
#include "engine/plan/nccl228_prepare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>

#include "engine/plan/nccl228_tuner.hpp"

namespace railcheck::plan {
namespace {

// src/include/bitops.h u32fpEncode: a float-like code with `bits` mantissa bits.
std::uint32_t fp_encode(std::uint32_t x, int bits) {
  const int log2x = 31 - std::countl_zero(x | 1U);
  const std::uint32_t mantissa = (x >> (log2x >= bits ? log2x - bits : 0)) & ((1U << bits) - 1);
  const std::uint32_t exponent = log2x >= bits ? static_cast<std::uint32_t>(log2x - (bits - 1)) : 0;
  return exponent << bits | mantissa;
}

// src/include/comm.h ncclTaskCollSorterInsert: bin of a traffic size, 0 = largest.
int sorter_bin(std::uint64_t traffic) {
  constexpr int kUnitLog2 = 10, kMaxLog2 = 30, kBitsPerPow2 = 2;
  constexpr int kBinCount = 1 + (kMaxLog2 - kUnitLog2) * (1 << kBitsPerPow2);
  const auto clamped = static_cast<std::uint32_t>(std::min<std::uint64_t>(1ULL << kMaxLog2, traffic) >> kUnitLog2);
  return kBinCount - 1 - static_cast<int>(fp_encode(clamped, kBitsPerPow2));
}

// collTaskAppend: AllGather and Broadcast are moved as bytes (ncclInt8).
bool moved_as_bytes(const CollTask& t) { return t.op == CollOp::AllGather || t.op == CollOp::Broadcast; }
DataType as_bytes_type(const CollTask& t) { return moved_as_bytes(t) ? DataType::Int8 : t.dtype; }

// src/include/enqueue.h ncclFuncMaxSendRecvCount.
std::uint64_t max_send_recv_count(CollOp op, std::uint32_t nranks, std::uint64_t count) {
  return op == CollOp::AllGather || op == CollOp::ReduceScatter ? nranks * count : count;
}

}  // namespace

int traffic_per_byte(CollOp op, std::uint32_t nranks) {
  switch (op) {
    case CollOp::AllReduce: return 2;
    case CollOp::AllGather:
    case CollOp::ReduceScatter: return static_cast<int>(nranks);
    default: return 1;
  }
}

Result<std::vector<PreparedColl>> prepare_colls_2_28(const CommShape& shape, const std::vector<CollTask>& colls) {
  struct Item {
    PreparedColl p;
    CollTask task;
    int bin = 0;
  };
  std::vector<Item> items;
  for (std::uint32_t i = 0; i < colls.size(); ++i) {
    const CollTask& t = colls[i];
    if (t.count > kMaxModelBytes / size_of(t.dtype))
      return Error{fmt::format("collective {} ({}): count {} is beyond the 2.28 model's range", i, name(t.op), t.count),
                   "at most 1 TiB per operation"};
    if (t.count == 0) continue;  // taskAppend: "Empty collectives can be discarded."
    Item it;
    it.task = t;
    it.p.input = i;
    const bool as_bytes = moved_as_bytes(t);
    it.p.elem_size = as_bytes ? 1 : size_of(t.dtype);
    it.p.count = as_bytes ? t.count * size_of(t.dtype) : t.count;
    it.p.traffic = it.p.count * it.p.elem_size * static_cast<std::uint64_t>(traffic_per_byte(t.op, shape.nranks));
    // Given (a TUNING line, a trace) or left to the tuner (empty): checked here, decided per run below.
    if (!t.algorithm.empty() || !t.protocol.empty()) {
      auto a = algorithm_index(t.algorithm);
      auto p = protocol_index(t.protocol);
      if (!a || !p)
        return Error{fmt::format("collective {} ({}): algorithm '{}' / protocol '{}' unknown to the 2.28 model", i,
                                 name(t.op), t.algorithm, t.protocol),
                     "use Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree or PAT and LL, LL128 or Simple"};
      it.p.algo = *a;
      it.p.proto = *p;
    }
    it.bin = sorter_bin(it.p.traffic);
    items.push_back(std::move(it));
  }
  // The sorter's list: bins largest first; a bin pushes new tasks at its head (latest first).
  std::vector<std::size_t> sorted(items.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) sorted[i] = sorted.size() - 1 - i;
  std::stable_sort(sorted.begin(), sorted.end(), [&](auto x, auto y) { return items[x].bin < items[y].bin; });
  // ncclPrepareTasks: bin by (fn, op, ty) in order of first appearance; each bin is a LIFO, so
  // it is walked in reverse sorted order (size ascending).
  std::vector<std::string> key_order;
  std::map<std::string, std::vector<std::size_t>> by_key;
  for (auto i : sorted) {
    const CollTask& t = items[i].task;
    std::string key = fmt::format("{}/{}/{}", name(t.op), name(t.redop), name(as_bytes_type(t)));
    if (by_key.find(key) == by_key.end()) key_order.push_back(key);
    by_key[key].insert(by_key[key].begin(), i);
  }
  // ncclPrepareTasks' nTasksPerChannel, getAlgoInfo's numPipeOps: "Crudely estimate number of tasks per channel".
  const int pipe_ops = static_cast<int>((items.size() + shape.coll_channels - 1) / shape.coll_channels);
  std::vector<PreparedColl> out;
  for (const auto& key : key_order) {
    const auto& run = by_key[key];
    std::size_t beg = 0;
    while (beg < run.size()) {
      // "We aggregate operations that are within 4X size of each other."
      const Item& first = items[run[beg]];
      std::size_t end = beg + 1;
      std::uint64_t agg_count = first.p.count;
      while (end < run.size() && items[run[end]].p.traffic < 4 * first.p.traffic)
        agg_count += items[run[end++]].p.count;
      // getAlgoInfo -> topoGetAlgoInfo on the aggregate: nBytes = elemSize * maxSendRecvCount.
      const std::uint64_t nbytes = first.p.elem_size * max_send_recv_count(first.task.op, shape.nranks, agg_count);
      // getAlgoInfo: the run's algorithm and protocol (the first task's when given), channels, warps.
      const TuneQuery q{first.task.op, first.task.redop, as_bytes_type(first.task), nbytes, pipe_ops};
      auto tuned = first.task.algorithm.empty() ? tune_coll_2_28(shape, q)
                                                : algo_channels_2_28(shape, first.p.algo, first.p.proto, nbytes);
      if (!tuned)
        return Error{fmt::format("collective {} ({}): {}", first.p.input, name(first.task.op), tuned.error().what),
                     tuned.error().hint};
      const int a = tuned->algo, p = tuned->proto;
      int nc = tuned->max_channels;
      std::string rule = fmt::format("{} ({} aggregated task{})", tuned->rule, end - beg, end - beg == 1 ? "" : "s");
      if (first.task.channels != 0) {
        // As a tuner plugin's nMaxChannels (getAlgoInfo), never more than the communicator has.
        nc = static_cast<int>(std::min(first.task.channels, shape.coll_channels));
        rule = fmt::format("nMaxChannels {} given by the input; {}", nc, rule);
      }
      for (std::size_t k = beg; k < end; ++k) {
        Item& it = items[run[k]];
        it.p.algo = a;
        it.p.proto = p;
        it.p.max_channels = nc;
        it.p.warps = tuned->warps;
        if (p == kProtoLL) it.p.traffic *= 4;  // ncclPrepareTasks: LL moves 4x the bytes
        it.p.func_key = fmt::format("{}/{}/{}", key, a, p);
        it.p.rule = rule;
        out.push_back(it.p);
      }
      beg = end;
    }
  }
  return out;
}

}  // namespace railcheck::plan
