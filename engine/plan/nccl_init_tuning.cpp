// Reading the scheduler's inputs off NCCL 2.28 INIT lines (nccl_init_tuning.hpp).
#include "engine/plan/nccl_init_tuning.hpp"

#include <fmt/format.h>

#include <charconv>

#include "engine/core/ascii.hpp"
#include "engine/plan/nccl228_cost_table.hpp"
#include "engine/plan/nccl228_table_inputs.hpp"
#include "engine/plan/nccl_info_lines.hpp"

namespace railcheck::plan {
namespace {

// Every unsigned number in `s` that stands on its own, in order ("p2p" holds none).
std::vector<std::uint64_t> numbers(std::string_view s) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < s.size();) {
    if (!is_ascii_digit(s[i])) {
      ++i;
      continue;
    }
    if (i > 0 && is_ascii_alpha(s[i - 1])) {
      while (i < s.size() && (is_ascii_digit(s[i]) || is_ascii_alpha(s[i]))) ++i;
      continue;
    }
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (ec != std::errc{}) break;
    out.push_back(v);
    i = static_cast<std::size_t>(p - s.data());
  }
  return out;
}

}  // namespace

Result<InitTuning> parse_init_tuning(std::string_view text, std::string_view origin) {
  const std::string_view all = text;
  InitTuning t;
  std::vector<int> threads;
  NcclInfoLines lines(text);
  while (const auto info = lines.next()) {
    const std::string_view body = *info;
    const std::size_t lineno = lines.lineno();
    auto bad = [&](std::string_view what) {
      return Error{fmt::format("{}:{}: INIT line: {}", origin, lineno, what), "is the log from NCCL 2.28?"};
    };
    if (const auto at = body.find(" nNodes "); at != std::string_view::npos && body.starts_with("comm 0x")) {
      if (t.nnodes) continue;
      const auto n = numbers(body.substr(at));
      if (n.empty() || n[0] == 0) return bad("no node count after nNodes");
      t.nnodes = static_cast<std::uint32_t>(n[0]);
      if (const auto lr = body.find(" localRanks "); lr != std::string_view::npos) {
        const auto m = numbers(body.substr(lr));
        if (m.empty() || m[0] == 0) return bad("no rank count after localRanks");
        t.local_ranks = static_cast<std::uint32_t>(m[0]);
      }
    } else if (body.find(" coll channels, ") != std::string_view::npos &&
               body.find(" p2p channels per peer") != std::string_view::npos) {
      if (t.coll_channels) continue;
      const auto n = numbers(body);
      if (n.size() != 5) return bad("expected 5 channel counts");
      t.coll_channels = static_cast<std::uint32_t>(n[0]);
      t.nvls_channels = static_cast<std::uint32_t>(n[2]);
      t.p2p_channels = static_cast<std::uint32_t>(n[3]);
      t.p2p_channels_per_peer = static_cast<std::uint32_t>(n[4]);
    } else if (body.starts_with("P2P Chunksize set to ")) {
      if (t.p2p_chunk_bytes) continue;
      const auto n = numbers(body.substr(21));
      if (n.size() != 1 || n[0] == 0) return bad("no chunk size");
      t.p2p_chunk_bytes = n[0];
    } else if (body.find("Max NThreads |") != std::string_view::npos) {
      if (t.max_threads) continue;
      for (auto v : numbers(body)) threads.push_back(static_cast<int>(v));
      if (threads.size() == kNumAlgorithms * kNumProtocols) {
        AlgoProtoTable table{};
        for (int a = 0; a < kNumAlgorithms; ++a)
          for (int p = 0; p < kNumProtocols; ++p)
            table[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)] =
                threads[static_cast<std::size_t>(a * kNumProtocols + p)];
        t.max_threads = table;
      } else if (threads.size() > kNumAlgorithms * kNumProtocols) {
        return bad("more Max NThreads values than 7 algorithms x 3 protocols");
      }
    } else if (body.starts_with("Channel ") && body.find(" via ") != std::string_view::npos) {
      const std::string_view via = body.substr(body.find(" via ") + 5);
      if (via.starts_with("P2P/")) t.intra_link = Nccl228Params::IntraLink::P2p;
      if (via.starts_with("SHM/") && !t.intra_link) t.intra_link = Nccl228Params::IntraLink::Shm;
    } else if (body.starts_with("threadThresholds ")) {
      if (t.thresholds) continue;
      const auto n = numbers(body);
      if (n.size() != 8) return bad("expected 8 thresholds (Tree x3 | Ring x3 | CollNetDirect | CollNetChain)");
      std::array<int, 8> th{};
      for (std::size_t i = 0; i < 8; ++i) th[i] = static_cast<int>(n[i]);
      t.thresholds = th;
    }
  }
  auto costs = parse_cost_tables(all, origin);
  if (!costs) return costs.error();
  t.costs = costs.value();
  return t;
}

std::vector<std::string> apply_init_tuning(const InitTuning& t, CommShape& s) {
  std::vector<std::string> notes;
  if (t.nnodes) {
    s.v228.nnodes = *t.nnodes;
    notes.push_back(fmt::format("{} nodes (INIT: nNodes)", *t.nnodes));
  }
  if (t.coll_channels) {
    s.coll_channels = *t.coll_channels;
    s.p2p_channels = *t.p2p_channels;
    s.p2p_channels_per_peer = *t.p2p_channels_per_peer;
    notes.push_back(fmt::format("{} coll channels, {} p2p channels, {} per peer (INIT)", s.coll_channels,
                                s.p2p_channels, s.p2p_channels_per_peer));
  }
  if (t.nvls_channels) s.v228.nvls_channels = *t.nvls_channels;
  if (t.local_ranks) {
    s.v228.local_ranks = *t.local_ranks;
    notes.push_back(fmt::format("{} local ranks (INIT: localRanks)", *t.local_ranks));
  }
  if (t.costs) {
    // Printed to 0.1: recover the exact values where ncclTopoTuneModel's inputs can be found.
    s.v228.costs = exact_tables(s, *t.costs);
    notes.push_back(
        fmt::format("latency/bandwidth tables from the TUNING table NCCL printed (graph/tuning.cc ncclTopoTuneModel){}",
                    !s.v228.costs->recomputed ? ", as printed (no topology reproduces them exactly)"
                                              : ", recomputed exactly from the topology that rounds to them"));
  }
  if (t.p2p_chunk_bytes) {
    s.v228.p2p_chunk_bytes = *t.p2p_chunk_bytes;
    notes.push_back(fmt::format("p2p chunk {} B (INIT: P2P Chunksize)", *t.p2p_chunk_bytes));
  }
  if (t.intra_link) {
    s.v228.intra_link = *t.intra_link;
    notes.push_back(fmt::format("ranks of a node connected via {} (INIT transport lines)",
                                *t.intra_link == Nccl228Params::IntraLink::P2p ? "P2P" : "SHM"));
  }
  if (t.max_threads) {
    s.v228.max_threads = *t.max_threads;
    s.v228.max_threads_logged = true;
    notes.push_back("thread table from INIT's Max NThreads rows");
  }
  if (t.thresholds) {
    // Printed after tuning.cc scaled Ring LL by nRanks; CollNet entries are their Simple column.
    const auto& th = *t.thresholds;
    for (int p = 0; p < kNumProtocols; ++p) {
      s.v228.thread_thresholds[kAlgoTree][static_cast<std::size_t>(p)] = th[static_cast<std::size_t>(p)];
      s.v228.thread_thresholds[kAlgoRing][static_cast<std::size_t>(p)] = th[static_cast<std::size_t>(3 + p)];
    }
    s.v228.thread_thresholds[2][kProtoSimple] = th[6];
    s.v228.thread_thresholds[3][kProtoSimple] = th[7];
    s.v228.ring_ll_threshold_scaled = true;
    notes.push_back(
        fmt::format("thread thresholds {}/{}/{} | {}/{}/{} (INIT)", th[0], th[1], th[2], th[3], th[4], th[5]));
  }
  return notes;
}

Result<std::vector<std::string>> apply_init_logs(const std::vector<NamedLog>& logs, CommShape& shape) {
  std::vector<std::string> notes;
  bool comm_taken = false;
  std::optional<CostTables> costs;
  std::optional<AlgoProtoTable> max_threads;  // printed with the tables (rank 0's TUNING block)
  for (const auto& f : logs) {
    auto init = parse_init_tuning(f.text, f.name);
    if (!init) return init.error();
    if (!costs) costs = init->costs;
    if (!max_threads) max_threads = init->max_threads;
    if (comm_taken || (!init->coll_channels && !init->nnodes)) continue;
    init->costs.reset();
    init->max_threads.reset();
    for (auto& n : apply_init_tuning(init.value(), shape)) notes.push_back(fmt::format("{}: {}", f.name, n));
    comm_taken = true;
  }
  if (costs || max_threads) {
    InitTuning only_costs;
    only_costs.costs = costs;
    only_costs.max_threads = max_threads;
    for (auto& n : apply_init_tuning(only_costs, shape)) notes.push_back(n);
  }
  return notes;
}

}  // namespace railcheck::plan
