// NCCL COLL log importer (nccl_log_import.hpp).
#include "engine/plan/nccl_log_import.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <regex>

#include "engine/plan/stream_builder.hpp"

namespace railcheck::plan {
namespace {

// "host:pid:tid [dev] " is optional: a per-rank log may have been stripped of it.
const std::regex kPrefix(R"(^\s*(?:([^\s:]+):(\d+):(\d+)\s+\[(\d+)\]\s+)?NCCL INFO )");
const std::regex kOpLine(
    R"(^([A-Za-z]+): opCount ([0-9a-fA-Fx]+) sendbuff (\S+) recvbuff (\S+) count (\d+) datatype (-?\d+) op (-?\d+) root (-?\d+) comm (\S+) \[nranks=(\d+)\] stream (\S+)\s*$)");
const std::regex kInitLine(R"(comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) .*Init COMPLETE)");

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
};

Error at(const LogFile& f, std::uint32_t line, std::string what, std::string hint = {}) {
  return Error{fmt::format("{}:{}: {}", f.name, line, what), std::move(hint)};
}

class Importer {
 public:
  explicit Importer(const std::vector<LogFile>& files) : files_(files) {}

  Result<ImportedLog> run() {
    for (std::size_t i = 0; i < files_.size(); ++i)
      if (auto ok = scan(i); !ok) return ok.error();
    if (ops_.empty())
      return Error{"no NCCL COLL lines found in " + files_.front().name,
                   "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL"};
    return build();
  }

 private:
  Result<bool> scan(std::size_t fi) {
    const LogFile& f = files_[fi];
    std::uint32_t line_no = 0;
    std::size_t pos = 0;
    while (pos < f.text.size()) {
      const auto end = std::min(f.text.find('\n', pos), f.text.size());
      const std::string line = f.text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      std::smatch pre;
      if (!std::regex_search(line, pre, kPrefix)) continue;
      // The file is part of the key: two per-rank logs may reuse a pid on different hosts.
      const std::string process = pre[1].matched ? f.name + "|" + pre[1].str() + ":" + pre[2].str() : f.name;
      const std::string body = pre.suffix().str();
      std::smatch m;
      if (std::regex_search(body, m, kInitLine)) {
        init_rank_[{process, m[1].str()}] = static_cast<std::uint32_t>(std::stoul(m[2].str()));
        continue;
      }
      if (body.find(": opCount ") == std::string::npos) continue;
      if (!std::regex_match(body, m, kOpLine))
        return at(f, line_no, "malformed NCCL COLL line: " + body.substr(0, 100),
                  "expected '<Op>: opCount N sendbuff P recvbuff P count N datatype N op N root N comm P "
                  "[nranks=N] stream P'");
      OpLine op{process,
                m[9].str(),
                m[1].str(),
                m[2].str(),
                std::stoull(m[5].str()),
                std::stoll(m[6].str()),
                std::stoll(m[7].str()),
                std::stoll(m[8].str()),
                static_cast<std::uint32_t>(std::stoul(m[10].str())),
                fi,
                line_no};
      if (auto ok = check(op); !ok) return ok;
      ops_.push_back(std::move(op));
    }
    return true;
  }

  Result<bool> check(const OpLine& op) const {
    const LogFile& f = files_[op.file];
    const bool p2p = op.op == "Send" || op.op == "Recv";
    if (!p2p && !coll_op_from_name(op.op))
      return at(f, op.line, fmt::format("unknown operation '{}'", op.op),
                "the model knows AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, Send and Recv");
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

  Result<ImportedLog> build() const {
    ImportedLog out;
    auto rank_of = ranks(out.notes);
    if (!rank_of) return rank_of.error();
    const std::uint32_t nranks = ops_.front().nranks;
    StreamBuilder builder;
    std::map<std::uint32_t, std::string> open_count;  // rank -> opCount of its open group
    for (const auto& op : ops_) {
      if (op.nranks != nranks)
        return at(files_[op.file], op.line,
                  fmt::format("nranks={} differs from the first line's {}", op.nranks, nranks),
                  "the log holds several communicators; keep one communicator's lines");
      const std::uint32_t rank = rank_of.value().at({op.process, op.comm});
      auto it = open_count.find(rank);
      if (it != open_count.end() && it->second != op.op_count) {
        if (auto ok = builder.group_end(rank, false); !ok) return ok.error();
        open_count.erase(it);
      }
      if (!open_count.count(rank)) {
        builder.group_start(rank);
        open_count[rank] = op.op_count;
      }
      const auto dtype = *datatype_from_code(op.datatype);
      if (op.op == "Send" || op.op == "Recv") {
        builder.add(rank, P2pTask{op.op == "Send" ? P2pDir::Send : P2pDir::Recv, static_cast<std::uint32_t>(op.root),
                                  op.count * size_of(dtype), op.line});
      } else {
        CollTask t;
        t.op = *coll_op_from_name(op.op);
        t.count = op.count;
        t.dtype = dtype;
        t.redop = *redop_from_code(op.redop);
        t.source_line = op.line;
        builder.add(rank, t);
      }
    }
    for (const auto& [rank, count] : open_count)
      if (auto ok = builder.group_end(rank, false); !ok) return ok.error();
    out.input.source = "nccl log";
    out.input.shape.nranks = nranks;
    auto streams = builder.finish(nranks);
    if (!streams) return streams.error();
    out.input.ranks = std::move(streams).value();
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

  const std::vector<LogFile>& files_;
  std::vector<OpLine> ops_;
  std::map<std::pair<std::string, std::string>, std::uint32_t> init_rank_;
};

}  // namespace

bool looks_like_nccl_log(std::string_view text) { return text.find("NCCL INFO") != std::string_view::npos; }

Result<ImportedLog> import_nccl_logs(const std::vector<LogFile>& files) {
  if (files.empty()) return Error{"no log files given", ""};
  return Importer(files).run();
}

}  // namespace railcheck::plan
