// NCCL COLL log importer (nccl_log_import.hpp).
#include "engine/plan/nccl_log_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "engine/core/ascii.hpp"
#include "engine/core/excerpt.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/groundtruth.hpp"
#include "engine/plan/nccl_init_tuning.hpp"
#include "engine/plan/nccl_log_lines.hpp"
#include "engine/plan/stream_builder.hpp"

namespace railcheck::plan {
namespace {

// Hand-written matchers instead of std::regex (nccl_log_lines.hpp): linear in the line, and a
// line is refused above this size (an NCCL INFO line is a few hundred bytes).
constexpr std::size_t kMaxLineBytes = 64 * 1024;
constexpr std::uint64_t kMaxCount = 1ULL << 48;  // as sched_trace: count * sizeof(datatype) cannot overflow
constexpr std::uint32_t kMaxChannels = 64;       // NCCL's MAXCHANNELS

// Operations NCCL 2.28.9 turns into p2p tasks (src/enqueue.cc taskAppend): AlltoAll sends and
// receives `count` elements to and from every rank, itself included, in rank order; Gather sends
// to the root, which receives from every rank; Scatter is Gather reversed.
bool is_p2p_op(std::string_view op) {
  return op == "Send" || op == "Recv" || op == "AlltoAll" || op == "Gather" || op == "Scatter";
}

std::vector<P2pTask> p2p_tasks(std::string_view op, std::uint32_t rank, std::uint32_t nranks, std::uint32_t root,
                               std::uint64_t bytes, std::uint32_t line) {
  std::vector<P2pTask> out;
  auto add = [&](P2pDir d, std::uint32_t peer) { out.push_back(P2pTask{d, peer, bytes, line}); };
  if (op == "Send" || op == "Recv") add(op == "Send" ? P2pDir::Send : P2pDir::Recv, root);
  if (op == "AlltoAll")
    for (std::uint32_t r = 0; r < nranks; ++r) add(P2pDir::Send, r), add(P2pDir::Recv, r);
  if (op == "Gather") {
    add(P2pDir::Send, root);
    if (rank == root)
      for (std::uint32_t r = 0; r < nranks; ++r) add(P2pDir::Recv, r);
  }
  if (op == "Scatter") {
    if (rank == root)
      for (std::uint32_t r = 0; r < nranks; ++r) add(P2pDir::Send, r);
    add(P2pDir::Recv, root);
  }
  return out;
}

struct OpLine {
  std::string process;  // "file|host:pid", or the file name when lines have no prefix
  std::string comm;
  std::string op;
  std::string op_count;
  std::uint64_t count = 0;
  std::int64_t datatype = 0;
  std::int64_t redop = 0;
  std::int64_t root = 0;
  std::uint32_t nranks = 0;
  std::size_t file = 0;
  std::uint32_t line = 0;
  std::size_t seq = 0;  // order among op and TUNING lines
};

// A TUNING line (2.28 src/enqueue.cc scheduleCollTasksToPlan, rank 0 only): printed when its
// collective is put into a plan, so after every COLL line of its launch.
struct TuneLine {
  std::string process;
  TuningLine tuning;
  std::size_t seq = 0;
};

Error at(const LogFile& f, std::uint32_t line, std::string what, std::string hint = {}) {
  return Error{fmt::format("{}:{}: {}", f.name, line, what), std::move(hint)};
}

// The two ranks of a transport line, "Channel 00/0 : 1[1] -> 0[0] [receive] via NET/Socket/0" (lower first).
std::optional<std::pair<std::uint32_t, std::uint32_t>> transport_link(std::string_view body) {
  const auto colon = body.find(" : ");
  const auto arrow = body.find("-> ");
  if (colon == std::string_view::npos || arrow == std::string_view::npos) return std::nullopt;
  const auto from = number_of<std::uint32_t>(body.substr(colon + 3, body.find('[', colon) - colon - 3));
  const auto to = number_of<std::uint32_t>(body.substr(arrow + 3, body.find('[', arrow) - arrow - 3));
  if (!from || !to) return std::nullopt;
  return std::make_pair(std::min(*from, *to), std::max(*from, *to));
}

// The lines of one process in a log that holds several (a merged log).
std::string lines_of(std::string_view text, std::string_view host_pid) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    if (const auto pre = match_prefix(line); pre && pre->host_pid == host_pid) (out += line) += '\n';
    pos = end + 1;
  }
  return out;
}

// src/init.cc commReclaim: "comm 0x.. rank R nranks N cudaDev D busId B - Destroy COMPLETE" (or
// "Abort COMPLETE"); ncclCommInitRank*: "... - Init COMPLETE". A log that shows its communicator's
// init but neither end was cut off mid-run: the process was killed or is still stuck.
RankLogEnd log_end(std::string_view text, std::string_view comm, std::string_view file) {
  RankLogEnd out;
  out.file = std::string(file);
  const std::string prefix = fmt::format("comm {} rank ", comm);
  bool init = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.find(prefix) == std::string_view::npos) continue;
    if (line.ends_with("- Init COMPLETE")) init = true;
    if (line.ends_with("- Destroy COMPLETE")) out.end = RankLogEnd::End::Destroyed;
    if (line.ends_with("- Abort COMPLETE")) out.end = RankLogEnd::End::Aborted;
  }
  if (out.end == RankLogEnd::End::Unknown && init) out.end = RankLogEnd::End::MidRun;
  return out;
}

class Importer {
 public:
  Importer(const std::vector<LogFile>& files, LaunchReading reading, const RankEnvSources& given)
      : files_(files), reading_(reading), given_(given) {}

  Result<ImportedLog> run() {
    for (std::size_t i = 0; i < files_.size(); ++i)
      if (auto ok = scan(i); !ok) return ok.error();
    if (ops_.empty())
      return Error{"no NCCL COLL lines found in " + files_.front().name,
                   "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL"};
    Boundaries seen;
    auto first = build(nullptr, &seen);
    if (!first || (seen.starts.empty() && seen.ends_after.empty())) return first;
    // NCCL launches a collective on every rank of the communicator in the same launch, so the
    // boundaries one rank's log shows between two collectives (its opCount advancing, or rank 0's
    // TUNING lines) hold on every rank, also where its own opCount stands still (P2P/SHM
    // connections): a launch starts at the later collective and ends after the earlier one (the
    // p2p operations between them, which differ per rank, form their own launch).
    auto second = build(&seen, nullptr);
    if (second)
      second->notes.push_back(fmt::format(
          "{} launch boundaries between collectives that one rank's log shows (opCount, TUNING lines) applied to "
          "every rank",
          seen.starts.size() + seen.ends_after.size()));
    return second;
  }

 private:
  Result<bool> scan(std::size_t fi) {
    const LogFile& f = files_[fi];
    std::uint32_t line_no = 0;
    std::size_t pos = 0;
    while (pos < f.text.size()) {
      const auto end = std::min(f.text.find('\n', pos), f.text.size());
      const std::string_view line = std::string_view(f.text).substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (line.size() > kMaxLineBytes) {
        if (line.find("NCCL INFO") == std::string::npos) continue;  // not ours, however long
        return at(f, line_no, fmt::format("line of {} bytes is longer than {} bytes", line.size(), kMaxLineBytes),
                  "an NCCL INFO line is a few hundred bytes; is this file an NCCL log?");
      }
      const auto pre = match_prefix(line);
      if (!pre) continue;
      // The file is part of the key: two per-rank logs may reuse a pid on different hosts.
      const std::string process = pre->host_pid.empty() ? f.name : f.name + "|" + pre->host_pid;
      if (processes_.try_emplace(process, ProcessLines{fi, std::string(pre->host_pid)}).second)
        ++processes_in_file_[fi];
      const std::string_view body = pre->body;
      if (const auto init = match_init(body)) {
        const auto rank = number_of<std::uint32_t>(init->rank);
        const auto nranks = number_of<std::uint32_t>(init->nranks);
        if (!nranks || *nranks == 0 || *nranks > kMaxRanks)
          return at(
              f, line_no,
              fmt::format("Init line: nranks {} is outside [1, {}]", escaped_excerpt(init->nranks, 24), kMaxRanks));
        if (!rank || *rank >= *nranks)
          return at(f, line_no,
                    fmt::format("Init line: rank {} is outside [0, {})", escaped_excerpt(init->rank, 24), *nranks));
        init_rank_[{process, init->comm}] = *rank;
        continue;
      }
      if (const auto channels = match_ring_channels(body)) {
        const auto n = number_of<std::uint32_t>(*channels);
        if (!n || *n == 0 || *n > kMaxChannels)
          return at(f, line_no,
                    fmt::format("ring line: channel count {} is outside [1, {}]", escaped_excerpt(*channels, 24),
                                kMaxChannels));
        ring_channels_.insert(*n);
        continue;
      }
      // Transport lines: "Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0".
      if (body.starts_with("Channel ") && body.find("->") != std::string_view::npos) {
        if (const auto via = body.find(" via "); via != std::string_view::npos) {
          const auto kind = body.substr(via + 5, body.find_first_of("/ ", via + 5) - via - 5);
          transports_.insert(std::string(kind));
          if (kind == "NET")
            if (auto link = transport_link(body)) net_links_.insert(*link);
        }
        continue;
      }
      if (body.find(" Bytes -> Algo ") != std::string_view::npos) {
        auto t = parse_tuning_lines(std::string(line) + "\n", f.name);
        if (!t)
          return at(f, line_no, "malformed TUNING line: " + escaped_excerpt(body),
                    "expected '<Func>: <bytes> Bytes -> Algo <A> proto <P> channel{Lo..Hi}={lo..hi}'");
        for (auto& one : t.value()) tunes_.push_back(TuneLine{process, std::move(one), seq_++});
        continue;
      }
      if (body.find(": opCount ") == std::string::npos) continue;
      const auto m = match_op(body);
      if (!m)
        return at(f, line_no, "malformed NCCL COLL line: " + escaped_excerpt(body),
                  "expected '<Op>: opCount N sendbuff P recvbuff P count N datatype N op N root N comm P "
                  "[nranks=N] stream P'");
      const auto count = number_of<std::uint64_t>(m->count);
      const auto datatype = number_of<std::int64_t>(m->datatype);
      const auto redop = number_of<std::int64_t>(m->redop);
      const auto root = number_of<std::int64_t>(m->root);
      const auto nranks = number_of<std::uint32_t>(m->nranks);
      if (!count || *count > kMaxCount)
        return at(
            f, line_no,
            fmt::format("count {} is beyond what the model takes ({})", escaped_excerpt(m->count, 24), kMaxCount));
      if (!datatype) return at(f, line_no, fmt::format("unknown datatype code {}", escaped_excerpt(m->datatype, 24)));
      if (!redop) return at(f, line_no, fmt::format("unknown reduction op code {}", escaped_excerpt(m->redop, 24)));
      if (!root) return at(f, line_no, fmt::format("root {} is out of range", escaped_excerpt(m->root, 24)));
      if (!nranks || *nranks > kMaxRanks)
        return at(f, line_no, fmt::format("nranks={} is outside [1, {}]", escaped_excerpt(m->nranks, 24), kMaxRanks));
      OpLine op{process,
                std::string(m->comm),
                std::string(m->op),
                std::string(m->op_count),
                *count,
                *datatype,
                *redop,
                *root,
                *nranks,
                fi,
                line_no,
                seq_++};
      if (auto ok = check(op); !ok) return ok;
      ops_.push_back(std::move(op));
    }
    return true;
  }

  Result<bool> check(const OpLine& op) const {
    const LogFile& f = files_[op.file];
    const bool p2p = is_p2p_op(op.op);
    if (!p2p && !coll_op_from_name(op.op))
      return at(f, op.line, fmt::format("unknown operation '{}'", op.op),
                "the model knows AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, Send, Recv, AlltoAll, "
                "Gather and Scatter");
    if (!datatype_from_code(op.datatype)) return at(f, op.line, fmt::format("unknown datatype code {}", op.datatype));
    if (!p2p && !redop_from_code(op.redop))
      return at(f, op.line, fmt::format("unknown reduction op code {}", op.redop));
    if (op.nranks == 0) return at(f, op.line, "nranks=0");
    if (p2p && (op.root < 0 || op.root >= static_cast<std::int64_t>(op.nranks)))
      return at(f, op.line, fmt::format("{} peer (root) {} is outside [0, {})", op.op, op.root, op.nranks));
    return true;
  }

  // Rank of each process+comm, by the rule in the header.
  Result<std::map<std::pair<std::string, std::string>, std::uint32_t>> ranks(std::vector<std::string>& notes) const {
    std::map<std::pair<std::string, std::string>, std::uint32_t> out;
    std::uint32_t next = 0;
    bool numbered_by_appearance = false;
    for (const auto& op : ops_) {
      const auto key = std::make_pair(op.process, op.comm);
      if (out.count(key)) continue;
      if (auto it = init_rank_.find(key); it != init_rank_.end())
        out[key] = it->second;
      else if (files_.size() > 1)
        out[key] = static_cast<std::uint32_t>(op.file);
      else {
        out[key] = next++;
        numbered_by_appearance = true;
      }
    }
    if (numbered_by_appearance)
      notes.push_back("no 'Init COMPLETE' lines: ranks numbered by first appearance of each process and comm");
    std::map<std::uint32_t, std::pair<std::string, std::string>> seen;
    for (const auto& [key, rank] : out) {
      if (!seen.emplace(rank, key).second)
        return Error{fmt::format("rank {} is claimed by both {} comm {} and {} comm {}", rank, seen[rank].first,
                                 seen[rank].second, key.first, key.second),
                     "the log holds several communicators; keep one communicator's lines"};
    }
    return out;
  }

  // Collectives (by index in a rank's issue order) that some rank's log shows starting a launch,
  // and those after which one ended.
  struct Boundaries {
    std::set<std::size_t> starts;
    std::set<std::size_t> ends_after;  // a p2p operation right after it started a new launch
  };

  // `forced`: launch boundaries to apply to ranks without TUNING lines; `seen`: where to report them.
  Result<ImportedLog> build(const Boundaries* forced, Boundaries* seen) const {
    ImportedLog out;
    auto rank_of = ranks(out.notes);
    if (!rank_of) return rank_of.error();
    const std::uint32_t nranks = ops_.front().nranks;
    StreamBuilder builder;
    // A launch ends where the opCount changes or, on rank 0, where a TUNING line shows its
    // collectives were scheduled (the next operation is then a new launch whatever its opCount).
    struct Open {
      std::string op_count;
      std::vector<const OpLine*> ops;
      std::vector<const TuneLine*> tunes;
      std::optional<std::size_t> last_coll;  // the last operation's collective index, if it is one
    };
    std::map<std::uint32_t, Open> open;
    std::map<std::string, std::uint32_t> rank_of_process;  // TUNING lines name no comm
    std::map<std::uint32_t, std::size_t> colls_of;         // collectives added so far, per rank
    std::map<std::uint32_t, std::uint32_t> last_op_line;   // per rank, for the verdict
    std::size_t split_by_tuning = 0, unmatched_tunes = 0;
    auto close = [&](std::uint32_t rank) -> Result<bool> {
      Open& o = open.at(rank);
      builder.group_start(rank);
      std::vector<bool> used(o.tunes.size(), false);
      for (const OpLine* op : o.ops) {
        const auto dtype = *datatype_from_code(op->datatype);
        if (is_p2p_op(op->op)) {
          for (const P2pTask& t : p2p_tasks(op->op, rank, op->nranks, static_cast<std::uint32_t>(op->root),
                                            op->count * size_of(dtype), op->line))
            builder.add(rank, t);
          continue;
        }
        CollTask t;
        t.op = *coll_op_from_name(op->op);
        t.count = op->count;
        t.dtype = dtype;
        t.redop = *redop_from_code(op->redop);
        t.source_line = op->line;
        // TUNING lines come in scheduling order (sorted by size), not issue order: match each
        // collective with the first unused line of its function and byte count.
        for (std::size_t k = 0; k < o.tunes.size(); ++k) {
          const TuningLine& tl = o.tunes[k]->tuning;
          if (used[k] || tl.func != op->op || tl.bytes != t.bytes()) continue;
          used[k] = true;
          t.algorithm = tl.algo;
          t.protocol = tl.proto;
          t.logged_lo = tl.lo;
          t.logged_hi = tl.hi;
          t.logged_by = static_cast<int>(rank);
          break;
        }
        builder.add(rank, t);
      }
      unmatched_tunes += static_cast<std::size_t>(std::count(used.begin(), used.end(), false));
      open.erase(rank);
      return builder.group_end(rank, false);
    };
    std::size_t ti = 0;
    auto take_tunes_before = [&](std::size_t seq) {
      for (; ti < tunes_.size() && tunes_[ti].seq < seq; ++ti) {
        auto r = rank_of_process.find(tunes_[ti].process);
        if (r == rank_of_process.end() || !open.count(r->second)) {
          ++unmatched_tunes;
          continue;
        }
        open.at(r->second).tunes.push_back(&tunes_[ti]);
      }
    };
    for (const auto& op : ops_) {
      if (op.nranks != nranks)
        return at(files_[op.file], op.line,
                  fmt::format("nranks={} differs from the first line's {}", op.nranks, nranks),
                  "the log holds several communicators; keep one communicator's lines");
      take_tunes_before(op.seq);
      const std::uint32_t rank = rank_of.value().at({op.process, op.comm});
      rank_of_process[op.process] = rank;
      last_op_line[rank] = op.line;
      const bool is_coll = !is_p2p_op(op.op);
      const std::size_t coll_index = colls_of[rank];
      if (auto it = open.find(rank); it != open.end()) {
        const bool new_count = it->second.op_count != op.op_count || reading_ == LaunchReading::EachOperation;
        const bool by_tuning = !new_count && !it->second.tunes.empty();
        const bool by_other_rank =
            !new_count && forced != nullptr &&
            ((is_coll && forced->starts.count(coll_index)) ||
             (!is_coll && it->second.last_coll && forced->ends_after.count(*it->second.last_coll)));
        // A new opCount is a new launch on that rank (src/proxy.cc ncclProxyStart advances it only
        // between launches); a collective launches on every rank at once, so where one rank's
        // opCount shows a collective starting a launch, it starts one on the ranks whose opCount
        // stands still there (P2P/SHM connections have no proxy ops).
        if (seen && new_count && is_coll && it->second.last_coll && reading_ == LaunchReading::AsLogged) {
          seen->starts.insert(coll_index);
          seen->ends_after.insert(*it->second.last_coll);
        }
        if (by_tuning) {
          ++split_by_tuning;
          if (seen && is_coll) seen->starts.insert(coll_index);
          if (seen && !is_coll && it->second.last_coll) seen->ends_after.insert(*it->second.last_coll);
        }
        if (new_count || by_tuning || by_other_rank)
          if (auto ok = close(rank); !ok) return ok.error();
      }
      auto& o = open[rank];
      o.op_count = op.op_count;
      o.ops.push_back(&op);
      o.last_coll = is_coll ? std::optional<std::size_t>(coll_index) : std::nullopt;
      if (is_coll) ++colls_of[rank];
    }
    take_tunes_before(seq_);
    while (!open.empty())
      if (auto ok = close(open.begin()->first); !ok) return ok.error();
    note_grouping(out.notes, out.boundaries_uncertain, split_by_tuning, unmatched_tunes);
    out.input.source = "nccl log";
    out.input.shape.nranks = nranks;
    // The communicator's channel count, as NCCL printed it at init; without ring lines the
    // model's default stands, and the report says so (NCCL_DEBUG_SUBSYS must include INIT).
    if (ring_channels_.size() == 1) {
      out.input.shape.coll_channels = *ring_channels_.begin();
      out.notes.push_back(
          fmt::format("collectives may use {} channels (the log's INIT ring lines)", out.input.shape.coll_channels));
    } else if (ring_channels_.empty()) {
      out.notes.push_back(
          fmt::format("no INIT ring lines ('Channel 00/NN : ...'): assuming {} channels for "
                      "collectives; log with NCCL_DEBUG_SUBSYS=INIT,COLL or pass --coll-channels",
                      out.input.shape.coll_channels));
    } else {
      out.input.shape.coll_channels = *ring_channels_.rbegin();
      out.notes.push_back(fmt::format("the INIT ring lines disagree on the channel count ({} to {}): using {}",
                                      *ring_channels_.begin(), *ring_channels_.rbegin(),
                                      out.input.shape.coll_channels));
    }
    // NCCL 2.28's scheduler inputs (nodes, p2p channels, chunk, thread and tuning tables) from INIT lines.
    std::vector<NamedLog> logs;
    for (const auto& f : files_) logs.push_back({f.name, f.text});
    auto taken = apply_init_logs(logs, out.input.shape);
    if (!taken) return taken.error();
    if (!taken->empty())
      out.notes.push_back(fmt::format("NCCL 2.28 parameters from the INIT lines: {}", fmt::join(taken.value(), "; ")));
    auto streams = builder.finish(nranks);
    if (!streams) return streams.error();
    out.input.ranks = std::move(streams).value();
    // Each rank from its own lines (issue 40): its settings, INIT facts and how its log ends.
    std::vector<RankLogText> texts(nranks);
    out.input.rank_ends.assign(nranks, RankLogEnd{});
    for (const auto& [key, rank] : rank_of.value()) {
      if (rank >= nranks || !texts[rank].name.empty()) continue;
      const ProcessLines& p = processes_.at(key.first);
      const LogFile& f = files_[p.file];
      texts[rank] = {f.name, processes_in_file_.at(p.file) == 1 ? f.text : lines_of(f.text, p.host_pid)};
      out.input.rank_ends[rank] = log_end(texts[rank].text, key.second, f.name);
      out.input.rank_ends[rank].last_op_line = last_op_line.count(rank) ? last_op_line.at(rank) : 0;
    }
    out.input.net_links = net_links_;
    auto modelled = model_each_rank(texts, given_, out.input);
    if (!modelled) return modelled.error();
    out.notes.insert(out.notes.end(), modelled->begin(), modelled->end());
    // A rank without lines replays as one that launched nothing, so the others wait on it;
    // say so, since a missing log file is the likelier cause than a rank that did nothing.
    std::vector<std::uint32_t> silent;
    for (const auto& r : out.input.ranks)
      if (r.groups.empty()) silent.push_back(r.rank);
    if (!silent.empty())
      out.notes.push_back(fmt::format("{} of {} ranks have no COLL lines (first: rank {}); is a log missing?",
                                      silent.size(), nranks, silent.front()));
    return out;
  }

  // What the log can and cannot say about launch boundaries (NCCL 2.28: comm->opCount advances
  // in src/proxy.cc ncclProxyStart, once per plan that has proxy ops, from the host-stream
  // callback when one is used; P2P and SHM connections have no proxy ops).
  void note_grouping(std::vector<std::string>& notes, bool& uncertain, std::size_t split_by_tuning,
                     std::size_t unmatched) const {
    std::vector<std::string> local;
    for (const auto& t : transports_)
      if (t != "NET" && t != "COLLNET") local.push_back(t);
    uncertain = transports_.empty() || !local.empty();
    if (transports_.empty()) {
      notes.push_back(
          "no INIT transport lines: launches are told apart by opCount, which NCCL 2.28 advances only for launches "
          "with proxy ops (network transport; src/proxy.cc ncclProxyStart); add INIT to NCCL_DEBUG_SUBSYS to check");
    } else if (!local.empty()) {
      notes.push_back(fmt::format(
          "this log's connections use {}: NCCL 2.28 advances opCount only for launches with proxy ops "
          "(src/proxy.cc ncclProxyStart), so operations sharing an opCount may be several launches and the log "
          "alone cannot tell the group boundaries; record with the profiler plugin (backends/hw/nccl_profiler) "
          "and use railcheck align, or NCCL_DEBUG_SUBSYS=TUNING shows rank 0's collective launches",
          fmt::join(local, ", ")));
    }
    if (split_by_tuning != 0)
      notes.push_back(fmt::format("{} launch boundaries inside one opCount found from TUNING lines (rank 0 only)",
                                  split_by_tuning));
    if (!tunes_.empty())
      notes.push_back(fmt::format("{} TUNING lines give NCCL's algorithm, protocol and channel range (rank 0){}",
                                  tunes_.size() - unmatched,
                                  unmatched ? fmt::format("; {} match no collective of their launch", unmatched) : ""));
  }

  // One process's lines: in which file, under which "host:pid" prefix.
  struct ProcessLines {
    std::size_t file = 0;
    std::string host_pid;
  };

  const std::vector<LogFile>& files_;
  LaunchReading reading_;
  const RankEnvSources& given_;
  std::map<std::string, ProcessLines> processes_;
  std::map<std::size_t, std::size_t> processes_in_file_;
  std::vector<OpLine> ops_;
  std::vector<TuneLine> tunes_;
  std::set<std::string> transports_;  // "NET", "P2P", "SHM", ... from the INIT transport lines
  std::set<std::pair<std::uint32_t, std::uint32_t>> net_links_;  // rank pairs joined by a NET transport line
  std::size_t seq_ = 0;
  std::map<std::pair<std::string, std::string>, std::uint32_t> init_rank_;
  std::set<std::uint32_t> ring_channels_;  // every channel count the INIT ring lines name
};

}  // namespace

Result<LogReadings> import_nccl_log_readings(const std::vector<LogFile>& files, const RankEnvSources& given) {
  auto log = import_nccl_logs(files, LaunchReading::AsLogged, given);
  if (!log) return log.error();
  LogReadings out{std::move(log).value(), std::nullopt};
  if (out.as_logged.boundaries_uncertain)
    // The second reading only ever relieves a verdict: where it cannot be made, the first stands.
    if (auto each = import_nccl_logs(files, LaunchReading::EachOperation, given); each)
      out.each_operation = std::move(each->input);
  return out;
}

bool looks_like_nccl_log(std::string_view text) { return text.find("NCCL INFO") != std::string_view::npos; }

Result<ImportedLog> import_nccl_logs(const std::vector<LogFile>& files, LaunchReading reading,
                                     const RankEnvSources& given) {
  if (files.empty()) return Error{"no log files given", ""};
  return Importer(files, reading, given).run();
}

}  // namespace railcheck::plan
