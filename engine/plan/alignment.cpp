// The 2.28 model against recorded NCCL runs (alignment.hpp).
#include "engine/plan/alignment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "engine/plan/nccl228_params.hpp"
#include "engine/plan/nccl228_prepare.hpp"
#include "engine/plan/nccl228_scheduler.hpp"
#include "engine/plan/nccl_init_tuning.hpp"
#include "engine/plan/nccl_types.hpp"

namespace railcheck::plan {
namespace {

// "ncclFloat32" -> DataType::Float32.
std::optional<DataType> dtype_of(std::string_view nccl_name) {
  if (!nccl_name.starts_with("nccl")) return std::nullopt;
  std::string s(nccl_name.substr(4));
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return datatype_from_name(s);
}

}  // namespace

Result<RecordedRun> load_recorded_run(const std::string& name, const std::vector<NamedText>& traces,
                                      const std::vector<NamedText>& logs) {
  RecordedRun run;
  run.name = name;
  if (traces.empty()) return Error{fmt::format("{}: no profiler traces (railcheck-prof-*.jsonl)", name), ""};
  std::vector<std::optional<TruthTrace>> by_rank;
  for (const auto& f : traces) {
    auto t = parse_truth_trace(f.text, f.name);
    if (!t) return t.error();
    if (t->nranks < 1 || t->nranks > static_cast<int>(kMaxRanks) || t->rank < 0 || t->rank >= t->nranks)
      return Error{fmt::format("{}: rank {} of {} ranks", f.name, t->rank, t->nranks), ""};
    if (by_rank.empty()) by_rank.resize(static_cast<std::size_t>(t->nranks));
    if (static_cast<int>(by_rank.size()) != t->nranks)
      return Error{fmt::format("{}: {} ranks, another trace of this run says {}", f.name, t->nranks, by_rank.size()),
                   ""};
    auto& slot = by_rank[static_cast<std::size_t>(t->rank)];
    if (slot) return Error{fmt::format("{}: a second trace of rank {}", f.name, t->rank), "one trace per rank"};
    slot = std::move(t).value();
  }
  for (std::size_t r = 0; r < by_rank.size(); ++r) {
    if (!by_rank[r]) return Error{fmt::format("{}: no trace of rank {}", name, r), "record every rank"};
    run.ranks.push_back(std::move(*by_rank[r]));
  }
  run.shape.nranks = static_cast<std::uint32_t>(run.ranks.size());
  if (run.ranks[0].nnodes > 0) run.shape.v228.nnodes = static_cast<std::uint32_t>(run.ranks[0].nnodes);
  std::vector<NamedLog> named;
  for (const auto& f : logs) named.push_back({f.name, f.text});
  auto taken = apply_init_logs(named, run.shape);
  if (!taken) return taken.error();
  run.notes = std::move(taken).value();
  if (run.notes.empty())
    run.notes.push_back(
        "no INIT lines with channel counts: CommShape and Nccl228Params defaults (an H100, NCCL 2.28.9)");
  auto ok = validated(run.shape);
  if (!ok) return Error{fmt::format("{}: {}", name, ok.error().what), ok.error().hint};
  return run;
}

std::string_view name(AlignField f) {
  switch (f) {
    case AlignField::Algorithm: return "algorithm";
    case AlignField::Protocol: return "protocol";
    case AlignField::Warps: return "warps";
    case AlignField::Channels: return "channels";
    case AlignField::ChannelCount: return "channel count";
    case AlignField::Plan: return "plan";
    case AlignField::Position: return "position";
  }
  return "";
}

Result<bool> align_run(const RecordedRun& run, AlignmentReport& report, bool predict) {
  // The model's input: every rank's calls, grouped by launch, with the recorded algorithm and protocol.
  std::vector<RankStream> streams;
  std::vector<std::vector<std::vector<int>>> coll_call(run.ranks.size()), p2p_call(run.ranks.size());
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    const TruthTrace& t = run.ranks[r];
    RankStream s{static_cast<std::uint32_t>(r), std::vector<TaskGroup>(t.group_first_plan.size())};
    coll_call[r].resize(t.group_first_plan.size());
    p2p_call[r].resize(t.group_first_plan.size());
    for (std::size_t c = 0; c < t.calls.size(); ++c) {
      const TruthCall& call = t.calls[c];
      auto where = [&] {
        return fmt::format("{} rank {} call #{} ({} {} {})", run.name, r, c, call.func, call.count, call.dtype);
      };
      if (call.task < 0)
        return Error{where() + ": NCCL scheduled no task for it", "a zero-byte operation? the model needs a task"};
      const TruthOp& op = t.ops[static_cast<std::size_t>(call.task)];
      auto ty = dtype_of(call.dtype);
      if (!ty) return Error{where() + ": unknown datatype", ""};
      if (call.count > kMaxModelBytes / size_of(*ty)) return Error{where() + ": beyond the model's 1 TiB", ""};
      const auto g = static_cast<std::size_t>(call.group);
      if (call.is_coll) {
        auto fn = coll_op_from_name(call.func);
        if (!fn) return Error{where() + ": a collective the model does not know", ""};
        CollTask task;
        task.op = *fn;
        task.count = call.count;
        task.dtype = *ty;
        if (!predict) {
          task.algorithm = op.algo;
          task.protocol = op.proto;
        }
        s.groups[g].colls.push_back(task);
        coll_call[r][g].push_back(static_cast<int>(c));
      } else {
        if (op.root_or_peer < 0 || op.root_or_peer >= static_cast<int>(run.ranks.size()))
          return Error{where() + fmt::format(": peer {} outside the communicator", op.root_or_peer), ""};
        s.groups[g].p2ps.push_back(P2pTask{call.func == "Send" ? P2pDir::Send : P2pDir::Recv,
                                           static_cast<std::uint32_t>(op.root_or_peer), call.count * size_of(*ty), 0});
        p2p_call[r][g].push_back(static_cast<int>(c));
      }
    }
    streams.push_back(std::move(s));
  }
  auto policy = policy_by_name("nccl");
  auto sched = schedule_all_2_28(run.shape, policy.value(), streams, /*explain=*/true);
  if (!sched) return Error{fmt::format("{}: the 2.28 model: {}", run.name, sched.error().what), sched.error().hint};

  report.workloads.push_back(run.name);
  report.config[run.name] = fmt::format("{} ranks, {} nodes, {} coll / {} p2p channels ({} per peer)", run.shape.nranks,
                                        run.shape.v228.nodes(run.shape.nranks), run.shape.coll_channels,
                                        run.shape.p2p_channels, run.shape.p2p_channels_per_peer);
  auto& wl = report.by_workload[run.name];
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    const TruthTrace& t = run.ranks[r];
    const auto& placed = sched->placed[r];
    std::vector<const OpPlacement*> by_call(t.calls.size(), nullptr);
    std::map<std::uint32_t, std::uint32_t> first_plan;  // model: group -> its first plan
    for (const auto& p : placed) {
      const auto& calls = (p.is_coll ? coll_call : p2p_call)[r][p.group];
      by_call[static_cast<std::size_t>(calls[p.input])] = &p;
      auto [it, fresh] = first_plan.emplace(p.group, p.plan);
      if (!fresh) it->second = std::min(it->second, p.plan);
    }
    for (std::size_t c = 0; c < t.calls.size(); ++c) {
      const TruthCall& call = t.calls[c];
      const TruthOp& op = t.ops[static_cast<std::size_t>(call.task)];
      OpAlignment a;
      a.workload = run.name;
      a.rank = static_cast<int>(r);
      a.call = static_cast<int>(c);
      a.func = call.func;
      a.what = fmt::format("{} {} {}{}", call.func, call.count, call.dtype,
                           call.is_coll ? "" : fmt::format(" peer {}", op.root_or_peer));
      a.truth.plan = op.plan - t.group_first_plan[static_cast<std::size_t>(call.group)];
      a.truth.position = op.position;
      a.truth.channels.assign(op.channels.begin(), op.channels.end());
      a.truth.nchannels = op.nchannels;
      if (call.is_coll) {
        a.truth.algo = algorithm_index(op.algo).value_or(-1);
        a.truth.proto = protocol_index(op.proto).value_or(-1);
        a.truth.warps = op.warps;
      }
      if (const OpPlacement* p = by_call[c]) {
        a.model.plan = static_cast<int>(p->plan - first_plan[p->group]);
        a.model.position = static_cast<int>(p->position);
        for (auto ch : p->channels) a.model.channels.push_back(static_cast<int>(ch));
        std::sort(a.model.channels.begin(), a.model.channels.end());
        a.model.nchannels = static_cast<int>(a.model.channels.size());
        a.model.algo = p->algo;
        a.model.proto = p->proto;
        a.model.warps = p->warps;
        a.rule = p->rule;
      } else {
        a.rule = "the model placed no task for this call";
      }
      for (AlignField f : kAlignFields) {
        const bool tuned = f == AlignField::Algorithm || f == AlignField::Protocol || f == AlignField::Warps;
        if (tuned && !(predict && call.is_coll)) continue;
        const bool set_shown = !a.truth.channels.empty() || a.truth.nchannels == 0;
        if ((f == AlignField::Channels && !set_shown) || (f == AlignField::ChannelCount && set_shown)) continue;
        bool same = false;
        switch (f) {
          case AlignField::Algorithm: same = a.truth.algo == a.model.algo; break;
          case AlignField::Protocol: same = a.truth.proto == a.model.proto; break;
          case AlignField::Warps: same = a.truth.warps == a.model.warps; break;
          case AlignField::Channels: same = a.truth.channels == a.model.channels; break;
          case AlignField::ChannelCount: same = a.truth.nchannels == a.model.nchannels; break;
          case AlignField::Plan: same = a.truth.plan == a.model.plan; break;
          case AlignField::Position: same = a.truth.position == a.model.position; break;
        }
        ++report.by_field[f].ops;
        report.by_field[f].matched += same ? 1 : 0;
        if (!same) a.differing.push_back(f);
      }
      a.matched = a.differing.empty();
      for (Tally* tally : {&wl, &report.by_func[call.func], &report.total}) {
        ++tally->ops;
        tally->matched += a.matched ? 1 : 0;
      }
      if (!a.matched) report.mismatches.push_back(std::move(a));
    }
  }
  return true;
}

}  // namespace railcheck::plan
