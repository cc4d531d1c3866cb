// Flight Recorder calls into the scheduling model (fr_replay.hpp).
#include "triage/fr_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "engine/plan/nccl_log_comms.hpp"
#include "engine/plan/nccl_log_import.hpp"
#include "triage/call_sequence_check.hpp"

namespace railcheck::triage {
namespace {

using plan::CollOp;
using plan::DataType;

// PyTorch's dtype names (c10 ScalarType) -> NCCL's.
std::optional<DataType> dtype_of(const std::string& t) {
  static const std::map<std::string, DataType> names{
      {"Float", DataType::Float32},       {"Half", DataType::Float16},
      {"BFloat16", DataType::Bfloat16},   {"Double", DataType::Float64},
      {"Int", DataType::Int32},           {"Long", DataType::Int64},
      {"Char", DataType::Int8},           {"Byte", DataType::Uint8},
      {"Bool", DataType::Uint8},          {"UInt32", DataType::Uint32},
      {"UInt64", DataType::Uint64},       {"Float8_e4m3fn", DataType::Fp8E4M3},
      {"Float8_e5m2", DataType::Fp8E5M2}, {"Float8_e4m3fnuz", DataType::Fp8E4M3}};
  auto it = names.find(t);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

std::optional<CollOp> coll_of(const std::string& op) {
  if (has(op, "all_reduce") || has(op, "allreduce") || has(op, "barrier")) return CollOp::AllReduce;
  if (has(op, "all_gather") || has(op, "allgather")) return CollOp::AllGather;
  if (has(op, "reduce_scatter")) return CollOp::ReduceScatter;
  if (has(op, "broadcast")) return CollOp::Broadcast;
  if (op == "reduce") return CollOp::Reduce;
  return std::nullopt;
}

bool is_all_to_all(const std::string& op) { return has(op, "to_all") || has(op, "alltoall"); }

class Builder {
 public:
  Builder(const FrProcessGroup& pg, std::uint32_t me) : pg_(pg), me_(me) {}

  Result<plan::RankStream> build(const FrDump& d) {
    plan::RankStream out;
    out.rank = me_;
    std::optional<plan::TaskGroup> batch;  // an open p2p batch
    std::int64_t open_coll_seq = -1;       // coalesced collectives share a sequence number
    for (std::size_t i = 0; i < d.entries.size(); ++i) {
      const FrEntry& e = d.entries[i];
      if (e.pg != pg_.id) continue;
      if (is_p2p_batch_marker(d.entries, i)) {
        if (batch) out.groups.push_back(std::move(*batch));
        batch.reset();
        continue;
      }
      if (e.op == "coalesced") continue;  // a collective batch's end: its members are grouped by number
      if (e.is_p2p) {
        auto t = p2p_task(e);
        if (!t) return t.error();
        if (batched(d, i)) {
          if (!batch) batch.emplace();
          batch->p2ps.push_back(t.value());
        } else {
          plan::TaskGroup g;
          g.p2ps.push_back(t.value());
          out.groups.push_back(std::move(g));
        }
        open_coll_seq = -1;
        continue;
      }
      auto g = coll_group(e);
      if (!g) return g.error();
      if (e.coll_seq == open_coll_seq && !out.groups.empty()) {
        auto& last = out.groups.back();
        last.colls.insert(last.colls.end(), g->colls.begin(), g->colls.end());
        last.p2ps.insert(last.p2ps.end(), g->p2ps.begin(), g->p2ps.end());
      } else {
        out.groups.push_back(std::move(g).value());
      }
      open_coll_seq = e.coll_seq;
    }
    if (batch) out.groups.push_back(std::move(*batch));  // dumped before its batch closed
    return out;
  }

 private:
  // A p2p entry is in a batch when a "coalesced" marker of its p2p number follows it.
  static bool batched(const FrDump& d, std::size_t i) {
    const FrEntry& e = d.entries[i];
    for (std::size_t j = i + 1; j < d.entries.size(); ++j) {
      const FrEntry& n = d.entries[j];
      if (n.pg != e.pg) continue;
      if (n.p2p_seq != e.p2p_seq) return false;
      if (n.op == "coalesced") return true;
    }
    return false;
  }

  Result<DataType> dtype(const FrEntry& e, const std::vector<std::string>& dtypes) const {
    if (dtypes.empty()) return Error{fmt::format("{} has no dtype", e.describe()), ""};
    auto t = dtype_of(dtypes.front());
    if (!t)
      return Error{fmt::format("{}: dtype {} has no NCCL type the model knows", e.describe(), dtypes.front()), ""};
    return *t;
  }

  Result<plan::P2pTask> p2p_task(const FrEntry& e) const {
    if (!e.peer || *e.peer >= pg_.ranks.size())
      return Error{fmt::format("{}: its peer is not a rank of process group {}", e.describe(), pg_.id), ""};
    auto t = dtype(e, e.op == "recv" ? e.out_dtypes : e.in_dtypes);
    if (!t) return t.error();
    const auto n = e.op == "recv" ? e.out_elements() : e.in_elements();
    return plan::P2pTask{e.op == "recv" ? plan::P2pDir::Recv : plan::P2pDir::Send, *e.peer,
                         static_cast<std::uint64_t>(n) * plan::size_of(t.value()), 0};
  }

  Result<plan::TaskGroup> coll_group(const FrEntry& e) const {
    plan::TaskGroup g;
    if (is_all_to_all(e.op)) {
      // NCCL has no all-to-all: PyTorch issues a send and a receive per rank (itself too) in one group.
      auto t = dtype(e, e.in_dtypes);
      if (!t) return t.error();
      const auto n = static_cast<std::uint64_t>(pg_.ranks.size());
      const auto bytes = static_cast<std::uint64_t>(e.in_elements()) * plan::size_of(t.value()) / n;
      for (std::uint32_t q = 0; q < n; ++q) {
        g.p2ps.push_back(plan::P2pTask{plan::P2pDir::Send, q, bytes, 0});
        g.p2ps.push_back(plan::P2pTask{plan::P2pDir::Recv, q, bytes, 0});
      }
      return g;
    }
    auto op = coll_of(e.op);
    if (!op) return Error{fmt::format("{} is a call the scheduling model does not replay", e.op), ""};
    auto t = dtype(e, e.in_dtypes);
    if (!t) return t.error();
    plan::CollTask c;
    c.op = *op;
    c.dtype = t.value();
    c.count = static_cast<std::uint64_t>(*op == CollOp::ReduceScatter ? e.out_elements() : e.in_elements());
    if (has(e.op, "barrier")) c.count = 1;
    g.colls.push_back(c);
    return g;
  }

  const FrProcessGroup& pg_;
  std::uint32_t me_;
};

std::optional<plan::CommShape> shape_from_logs(const std::vector<plan::LogFile>& logs, std::uint32_t nranks,
                                               std::vector<std::string>& notes) {
  if (logs.empty()) {
    notes.push_back(
        "no NCCL logs given: the communicator's channels and p2p chunk are the model's defaults (give the ranks' "
        "NCCL_DEBUG=INFO logs, NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING, for the real ones)");
    return std::nullopt;
  }
  // Subgroups give the logs several communicators: the group's is the one of its size with the
  // most operations.
  auto comms = plan::split_by_communicator(logs);
  const plan::LogCommunicator* mine = nullptr;
  for (const auto& c : comms)
    if (mine == nullptr && (c.nranks == nranks || comms.size() == 1)) mine = &c;
  if (mine == nullptr) {
    notes.push_back(
        fmt::format("the NCCL logs hold no {}-rank communicator ({}): not used", nranks, plan::describe(comms)));
    return std::nullopt;
  }
  if (comms.size() > 1) notes.push_back(fmt::format("the NCCL logs hold {}; used {}", plan::describe(comms), mine->id));
  auto imported = plan::import_nccl_logs(mine->files);
  if (!imported) {
    notes.push_back(fmt::format("the NCCL logs were not used: {}", imported.error().message()));
    return std::nullopt;
  }
  if (imported->input.shape.nranks != nranks) {
    notes.push_back(fmt::format("the NCCL logs are of a {}-rank communicator, the group has {}: not used",
                                imported->input.shape.nranks, nranks));
    return std::nullopt;
  }
  const auto& s = imported->input.shape;
  notes.push_back(
      fmt::format("communicator from the NCCL logs: {} collective channels, {} p2p channels ({} per peer), "
                  "p2p chunk {} B",
                  s.coll_channels, s.p2p_channels, s.p2p_channels_per_peer, s.v228.p2p_chunk_bytes));
  return s;
}

}  // namespace

plan::NcclVersion model_version(const std::string& v, std::vector<std::string>& notes) {
  unsigned major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%u.%u", &major, &minor) != 2) {
    notes.push_back(fmt::format("the dumps name no NCCL version ('{}'): NCCL 2.28's rules", v));
    return plan::NcclVersion::V2_28;
  }
  if (major == 2 && minor <= 18) {
    notes.push_back(fmt::format("NCCL {}: 2.18's scheduling rules", v));
    return plan::NcclVersion::V2_18;
  }
  notes.push_back(fmt::format("NCCL {}: 2.28's scheduling rules{}", v,
                              major == 2 && minor == 28 ? "" : " (the nearest the model has)"));
  return plan::NcclVersion::V2_28;
}

Result<plan::SchedInput> sched_input_from_calls(const std::vector<FrDump>& dumps, const FrProcessGroup& pg) {
  plan::SchedInput in;
  in.source = "flight recorder";
  in.shape.nranks = static_cast<std::uint32_t>(pg.ranks.size());
  for (std::uint32_t me = 0; me < pg.ranks.size(); ++me) {
    const auto d = std::find_if(dumps.begin(), dumps.end(), [&](const FrDump& x) { return x.rank == pg.ranks[me]; });
    if (d == dumps.end()) return Error{fmt::format("no dump from rank {}", pg.ranks[me]), ""};
    auto stream = Builder(pg, me).build(*d);
    if (!stream) return Error{fmt::format("rank {}: {}", d->rank, stream.error().message()), ""};
    in.ranks.push_back(std::move(stream).value());
  }
  return in;
}

std::vector<FrReplay> replay_calls(const std::vector<FrDump>& dumps, const std::vector<plan::LogFile>& logs) {
  std::vector<FrReplay> out;
  std::vector<std::string> seen;
  for (const auto& d : dumps)
    for (const auto& pg : d.pgs) {
      if (std::find(seen.begin(), seen.end(), pg.id) != seen.end()) continue;
      seen.push_back(pg.id);
      FrReplay r;
      r.pg = pg.id;
      auto in = sched_input_from_calls(dumps, pg);
      if (!in) {
        r.skipped = in.error().message();
        out.push_back(std::move(r));
        continue;
      }
      r.input = std::move(in).value();
      if (auto shape = shape_from_logs(logs, r.input.shape.nranks, r.notes)) r.input.shape = *shape;
      const auto version = model_version(d.comm_lib_version, r.notes);
      auto result = plan::replay(r.input, plan::policy_by_name("nccl").value(), version);
      if (!result)
        r.skipped = result.error().message();
      else
        r.result = std::move(result).value();
      out.push_back(std::move(r));
    }
  return out;
}

}  // namespace railcheck::triage
