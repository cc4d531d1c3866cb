// JSON-lines scheduling trace reader (sched_trace.hpp).
#include "engine/plan/sched_trace.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "engine/core/excerpt.hpp"
#include "engine/plan/stream_builder.hpp"

namespace railcheck::plan {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxCount = 1ULL << 48;  // keeps count * sizeof(datatype) far from overflow

class LineReader {
 public:
  LineReader(const json& j, std::string where) : j_(j), where_(std::move(where)) {}

  void allow_only(std::initializer_list<std::string_view> keys) {
    std::set<std::string_view> allowed(keys);
    for (const auto& [k, v] : j_.items())
      if (!allowed.count(k) && !error_) error_ = Error{fmt::format("{}: unknown key '{}'", where_, k), hint()};
  }

  std::optional<std::uint64_t> whole(std::string_view key, bool required) {
    return get<std::uint64_t>(key, required, &json::is_number_unsigned, "a non-negative integer");
  }
  std::optional<std::string> text(std::string_view key, bool required) {
    return get<std::string>(key, required, &json::is_string, "a string");
  }
  std::optional<bool> flag(std::string_view key) { return get<bool>(key, false, &json::is_boolean, "true or false"); }

  void fail(std::string what) {
    if (!error_) error_ = Error{fmt::format("{}: {}", where_, what), hint()};
  }
  const std::optional<Error>& error() const { return error_; }
  const std::string& where() const { return where_; }

 private:
  template <typename T>
  std::optional<T> get(std::string_view key, bool required, bool (json::*is)() const noexcept,
                       std::string_view expected) {
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) fail(fmt::format("missing key '{}'", key));
      return std::nullopt;
    }
    if (!((*it).*is)()) {
      fail(fmt::format("'{}' must be {}, got {}", key, expected, it->dump()));
      return std::nullopt;
    }
    return it->template get<T>();
  }

  static std::string hint() { return "see docs/plan.md, 'Trace format'"; }
  const json& j_;
  std::string where_;
  std::optional<Error> error_;
};

std::optional<CommShape> read_comm(LineReader& in, std::optional<NcclVersion>& nccl) {
  in.allow_only({"ev", "nranks", "coll_channels", "p2p_channels", "p2p_channels_per_peer", "work_fifo_depth",
                 "p2p_chunk_bytes", "persistent", "nccl"});
  CommShape s;
  if (auto v = in.text("nccl", false)) {
    nccl = nccl_version_from_name(*v);
    if (!nccl) in.fail(fmt::format("'nccl' = \"{}\": expected \"2.18\" or \"2.28\"", *v));
  }
  auto u32 = [&](std::string_view key, std::uint32_t& field) {
    if (auto v = in.whole(key, false)) {
      if (*v > UINT32_MAX) in.fail(fmt::format("'{}' = {} does not fit 32 bits", key, *v));
      field = static_cast<std::uint32_t>(*v);
    }
  };
  u32("nranks", s.nranks);
  u32("coll_channels", s.coll_channels);
  u32("p2p_channels", s.p2p_channels);
  u32("p2p_channels_per_peer", s.p2p_channels_per_peer);
  u32("work_fifo_depth", s.work_fifo_depth);
  if (auto v = in.whole("p2p_chunk_bytes", false)) s.p2p_chunk_bytes = *v;
  if (auto v = in.flag("persistent")) s.persistent = *v;
  if (in.error()) return std::nullopt;
  auto ok = validated(s);
  if (!ok) {
    in.fail(ok.error().what);
    return std::nullopt;
  }
  return s;
}

std::optional<CollTask> read_coll(LineReader& in, std::uint32_t line) {
  in.allow_only({"rank", "ev", "op", "count", "dtype", "redop", "algo", "proto", "channels"});
  CollTask t;
  t.source_line = line;
  auto op = in.text("op", true);
  auto count = in.whole("count", true);
  auto dtype = in.text("dtype", true);
  if (in.error()) return std::nullopt;
  auto parsed_op = coll_op_from_name(*op);
  if (!parsed_op)
    in.fail(fmt::format("unknown collective '{}' (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce)", *op));
  auto parsed_type = datatype_from_name(*dtype);
  if (!parsed_type) in.fail(fmt::format("unknown dtype '{}'", *dtype));
  if (in.error()) return std::nullopt;
  if (*count > kMaxCount) {
    in.fail(fmt::format("'count' = {} is beyond what the model takes ({})", *count, kMaxCount));
    return std::nullopt;
  }
  t.op = *parsed_op;
  t.count = *count;
  t.dtype = *parsed_type;
  if (auto r = in.text("redop", false)) {
    auto parsed = redop_from_name(*r);
    if (!parsed)
      in.fail(fmt::format("unknown redop '{}' (sum, prod, max, min, avg)", *r));
    else
      t.redop = *parsed;
  }
  if (auto a = in.text("algo", false)) t.algorithm = *a;
  if (auto p = in.text("proto", false)) t.protocol = *p;
  if (auto c = in.whole("channels", false)) {
    if (*c == 0 || *c > kMaxChannels)
      in.fail(fmt::format("'channels' must be in [1, {}], got {}", kMaxChannels, *c));
    else
      t.channels = static_cast<std::uint32_t>(*c);
  }
  if (in.error()) return std::nullopt;
  return t;
}

std::optional<P2pTask> read_p2p(LineReader& in, P2pDir dir, std::uint32_t line) {
  in.allow_only({"rank", "ev", "peer", "bytes"});
  auto peer = in.whole("peer", true);
  auto bytes = in.whole("bytes", true);
  if (in.error()) return std::nullopt;
  if (*peer >= kMaxRanks) in.fail(fmt::format("'peer' = {} is beyond {} ranks", *peer, kMaxRanks));
  if (*bytes > kMaxCount) in.fail(fmt::format("'bytes' = {} is beyond what the model takes ({})", *bytes, kMaxCount));
  if (in.error()) return std::nullopt;
  return P2pTask{dir, static_cast<std::uint32_t>(*peer), *bytes, line};
}

// One event line into the builder; returns false (with in.error()) on a problem.
bool read_event(LineReader& in, const std::string& ev, std::uint32_t rank, std::uint32_t line, StreamBuilder& b) {
  if (ev == "group_start") {
    in.allow_only({"rank", "ev"});
    b.group_start(rank);
  } else if (ev == "group_end") {
    in.allow_only({"rank", "ev", "p2p_done"});
    auto done = in.flag("p2p_done");
    if (in.error()) return false;
    auto ok = b.group_end(rank, done.value_or(false));
    if (!ok) in.fail(ok.error().what);
  } else if (ev == "coll") {
    if (auto t = read_coll(in, line)) b.add(rank, *t);
  } else if (ev == "send" || ev == "recv") {
    if (auto t = read_p2p(in, ev == "send" ? P2pDir::Send : P2pDir::Recv, line)) b.add(rank, *t);
  } else {
    in.fail(fmt::format("unknown event '{}' (comm, group_start, group_end, coll, send, recv)", ev));
  }
  return !in.error();
}

}  // namespace

Result<SchedInput> parse_sched_trace(std::string_view text, const std::string& file) {
  SchedInput out;
  out.source = "trace";
  std::optional<CommShape> shape;
  StreamBuilder builder;
  std::uint32_t line_no = 0;
  std::size_t at = 0;
  while (at <= text.size()) {
    const auto end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    const std::string where = fmt::format("{}:{}", file, line_no);
    // A trace line is one flat object of a few fields: bound it before parsing.
    constexpr std::size_t kMaxLineBytes = 64 * 1024;
    if (line.size() > kMaxLineBytes)
      return Error{fmt::format("{}: line of {} bytes is longer than {} bytes", where, line.size(), kMaxLineBytes),
                   "one JSON object of a few fields per line"};
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
      return Error{fmt::format("{}: not a JSON object: {}", where, escaped_excerpt(line)), "one JSON object per line"};
    LineReader in(j, where);
    auto ev = in.text("ev", true);
    if (in.error()) return *in.error();
    if (*ev == "comm") {
      if (shape) return Error{where + ": a second \"comm\" line", "give the communicator once, first"};
      shape = read_comm(in, out.nccl);
      if (in.error()) return *in.error();
      continue;
    }
    auto rank = in.whole("rank", true);
    if (in.error()) return *in.error();
    if (*rank >= kMaxRanks) return Error{fmt::format("{}: rank {} is beyond {} ranks", where, *rank, kMaxRanks), ""};
    if (shape && *rank >= shape->nranks)
      return Error{fmt::format("{}: rank {} is outside the communicator of {} ranks", where, *rank, shape->nranks), ""};
    if (!read_event(in, *ev, static_cast<std::uint32_t>(*rank), line_no, builder)) return *in.error();
  }
  if (builder.max_rank_plus_one() == 0)
    return Error{file + ": no events: the trace is empty or holds only comments and a \"comm\" line",
                 "one JSON object per line: {\"rank\":0,\"ev\":\"coll\",...} (docs/plan.md)"};
  out.shape = shape.value_or(CommShape{});
  if (!shape) out.shape.nranks = std::max<std::uint32_t>(1, builder.max_rank_plus_one());
  auto ranks = builder.finish(out.shape.nranks);
  if (!ranks) return Error{file + ": " + ranks.error().what, ranks.error().hint};
  out.ranks = std::move(ranks).value();
  for (const auto& r : out.ranks)
    for (const auto& g : r.groups)
      for (const auto& p : g.p2ps)
        if (p.peer >= out.shape.nranks)
          return Error{fmt::format("{}:{}: peer {} is outside the communicator of {} ranks", file, p.source_line,
                                   p.peer, out.shape.nranks),
                       "add a \"comm\" line with the right nranks, or fix the peer"};
  return out;
}

}  // namespace railcheck::plan
