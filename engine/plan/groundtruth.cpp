#include "engine/plan/groundtruth.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/core/json_integer.hpp"

namespace railcheck::plan {
namespace {

Error line_error(std::string_view origin, std::size_t line, const std::string& what) {
  return Error{fmt::format("{}:{}: {}", origin, line, what), ""};
}

std::string upper(std::string s) {
  for (auto& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

}  // namespace

Result<TruthTrace> parse_truth_trace(std::string_view text, std::string_view origin) {
  TruthTrace t;
  std::map<std::uint64_t, int> plan_index;    // plan event id -> plan number
  std::map<std::uint64_t, std::size_t> task;  // coll/p2p event id -> index in ops
  std::map<std::uint64_t, std::size_t> call;  // coll_api/p2p_api event id -> index in calls
  std::map<int, int> in_plan;                 // plan number -> tasks so far
  bool calls_open = false;                    // calls recorded since the last kernel launch
  bool saw_comm = false;
  bool saw_end = false;
  std::size_t lineno = 0;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineno;
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("ev") || !j["ev"].is_string()) {
      return line_error(origin, lineno, "not a profiler trace line");
    }
    try {
      const std::string ev = j["ev"].get<std::string>();
      if (ev == "comm") {
        saw_comm = true;
        t.rank = json_integer_at<int>(j, "rank");
        t.nranks = json_integer_at<int>(j, "nranks");
        t.nnodes = j.contains("nnodes") ? json_integer_at<int>(j, "nnodes") : 0;
      } else if (ev == "coll_api" || ev == "p2p_api") {
        if (!calls_open) t.group_first_plan.push_back(-1);
        calls_open = true;
        TruthCall c;
        c.is_coll = ev == "coll_api";
        c.func = j.at("func").get<std::string>();
        c.count = json_integer_at<std::uint64_t>(j, "count");
        c.dtype = j.at("dtype").get<std::string>();
        c.root = j.contains("root") ? json_integer_at<int>(j, "root") : 0;
        c.group = static_cast<int>(t.group_first_plan.size()) - 1;
        call[json_integer_at<std::uint64_t>(j, "id")] = t.calls.size();
        t.calls.push_back(std::move(c));
      } else if (ev == "kernel_launch") {
        calls_open = false;
      } else if (ev == "plan") {
        if (!t.group_first_plan.empty() && t.group_first_plan.back() < 0) t.group_first_plan.back() = t.plans;
        int n = t.plans++;
        plan_index[json_integer_at<std::uint64_t>(j, "id")] = n;
      } else if (ev == "coll" || ev == "p2p") {
        TruthOp op;
        op.is_coll = ev == "coll";
        op.func = j.at("func").get<std::string>();
        op.count = json_integer_at<std::uint64_t>(j, "count");
        op.dtype = j.at("dtype").get<std::string>();
        op.root_or_peer = json_integer_at<int>(j, op.is_coll ? "root" : "peer");
        op.nchannels = json_integer_at<int>(j, "nchannels");
        if (op.is_coll) {
          op.algo = j.at("algo").get<std::string>();
          op.proto = j.at("proto").get<std::string>();
          op.warps = json_integer_at<int>(j, "nwarps");
        }
        auto p = plan_index.find(json_integer_at<std::uint64_t>(j, "plan"));
        if (p == plan_index.end()) return line_error(origin, lineno, "task names a plan never started");
        op.plan = p->second;
        op.position = in_plan[op.plan]++;
        if (auto c = call.find(json_integer_at<std::uint64_t>(j, "parent")); c != call.end()) {
          op.call = static_cast<int>(c->second);
          t.calls[c->second].task = static_cast<int>(t.ops.size());
        }
        task[json_integer_at<std::uint64_t>(j, "id")] = t.ops.size();
        t.ops.push_back(std::move(op));
      } else if (ev == "kernel_ch") {
        auto it = task.find(json_integer_at<std::uint64_t>(j, "parent"));
        if (it == task.end()) return line_error(origin, lineno, "kernel channel of an unknown task");
        t.ops[it->second].channels.insert(json_integer_at<int>(j, "channel"));
      } else if (ev == "end") {
        saw_end = true;
        t.dropped =
            json_integer_at<std::uint64_t>(j, "dropped_events") + json_integer_at<std::uint64_t>(j, "dropped_lines");
      } else if (ev != "group_api" && ev != "proxy_op" && ev != "stop") {
        return line_error(origin, lineno, fmt::format("unknown event '{}'", ev));
      }
    } catch (const nlohmann::json::exception& e) {
      return line_error(origin, lineno, fmt::format("bad field: {}", e.what()));
    } catch (const std::out_of_range& e) {  // json_integer: not an integer of the field's type
      return line_error(origin, lineno, fmt::format("bad field: {}", e.what()));
    }
  }
  if (!saw_comm) return Error{fmt::format("{}: no comm line", origin), "is this a railcheck profiler trace?"};
  if (!saw_end) return Error{fmt::format("{}: no end line", origin), "the rank did not finish writing its trace"};
  if (t.dropped != 0) {
    return Error{fmt::format("{}: {} events or lines dropped", origin, t.dropped),
                 "raise RAILCHECK_PROFILER_MAX_EVENTS / _MAX_LINES"};
  }
  return t;
}

Result<std::vector<TuningLine>> parse_tuning_lines(std::string_view text, std::string_view origin) {
  std::vector<TuningLine> out;
  std::size_t lineno = 0;
  constexpr std::string_view kArrow = " Bytes -> Algo ";
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineno;
    std::size_t arrow = line.find(kArrow);
    if (arrow == std::string_view::npos) continue;
    // "... NCCL INFO <Func>: <bytes> Bytes -> Algo <A> proto <P> channel{Lo..Hi}={lo..hi}"
    std::size_t colon = line.rfind(": ", arrow);
    std::size_t info = line.rfind(" INFO ", colon);
    auto bad = [&](const char* what) { return line_error(origin, lineno, fmt::format("TUNING line: {}", what)); };
    if (colon == std::string_view::npos || info == std::string_view::npos) return bad("no function name");
    TuningLine t;
    t.func = std::string(line.substr(info + 6, colon - info - 6));
    std::string_view num = line.substr(colon + 2, arrow - colon - 2);
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), t.bytes);
    if (ec != std::errc{} || p != num.data() + num.size()) return bad("bytes is not a number");
    std::string_view rest = line.substr(arrow + kArrow.size());
    std::size_t sp = rest.find(' ');
    if (sp == std::string_view::npos) return bad("no algorithm");
    t.algo = std::string(rest.substr(0, sp));
    rest = rest.substr(sp + 1);
    if (rest.substr(0, 6) != "proto ") return bad("no protocol");
    rest = rest.substr(6);
    sp = rest.find(' ');
    if (sp == std::string_view::npos) return bad("no channel range");
    t.proto = std::string(rest.substr(0, sp));
    rest = rest.substr(sp + 1);
    constexpr std::string_view kRange = "channel{Lo..Hi}={";
    if (rest.substr(0, kRange.size()) != kRange) return bad("no channel range");
    rest = rest.substr(kRange.size());
    const char* end = rest.data() + rest.size();
    auto r1 = std::from_chars(rest.data(), end, t.lo);
    // The separator is compared only as far as the line goes ("{3." at the end of a line).
    if (r1.ec != std::errc{} || std::string_view(r1.ptr, std::size_t(end - r1.ptr)).substr(0, 2) != "..") {
      return bad("bad channel range");
    }
    auto r2 = std::from_chars(r1.ptr + 2, end, t.hi);
    if (r2.ec != std::errc{} || r2.ptr == end || *r2.ptr != '}' || t.lo < 0 || t.hi < t.lo || t.hi >= 64) {
      return bad("bad channel range");
    }
    out.push_back(std::move(t));
  }
  return out;
}

TruthCheck check_tuning_against_trace(const TruthTrace& trace, const std::vector<TuningLine>& tuning) {
  TruthCheck c;
  std::size_t k = 0;
  for (const auto& op : trace.ops) {
    if (!op.is_coll) continue;
    ++c.compared;
    if (k >= tuning.size()) {
      if (c.first_mismatch.empty())
        c.first_mismatch = fmt::format("collective #{} ({}) has no TUNING line", c.compared - 1, op.func);
      continue;
    }
    const TuningLine& t = tuning[k++];
    std::set<int> want;
    for (int ch = t.lo; ch <= t.hi; ++ch) want.insert(ch);
    bool same = t.func == op.func && upper(t.algo) == upper(op.algo) && upper(t.proto) == upper(op.proto) &&
                want == op.channels;
    if (same) {
      ++c.matched;
    } else if (c.first_mismatch.empty()) {
      c.first_mismatch = fmt::format(
          "collective #{}: trace {} {} {} channels {{{}}}, TUNING {} {} {} channels {{{}..{}}}", c.compared - 1,
          op.func, op.algo, op.proto, fmt::join(op.channels, ","), t.func, t.algo, t.proto, t.lo, t.hi);
    }
  }
  if (k != tuning.size() && c.first_mismatch.empty()) {
    c.first_mismatch = fmt::format("{} TUNING lines for {} collectives", tuning.size(), c.compared);
  }
  return c;
}

TruthCheck check_ranks_agree(const TruthTrace& a, const TruthTrace& b) {
  TruthCheck c;
  auto mirror = [](const std::string& f) {
    return f == "Send" ? std::string("Recv") : f == "Recv" ? std::string("Send") : f;
  };
  // p2p halves pair up by order among their kind: a's k-th Send with b's k-th Recv.
  std::map<std::string, std::vector<const TruthOp*>> b_by_func;
  for (const auto& op : b.ops) b_by_func[op.func].push_back(&op);
  std::map<std::string, std::size_t> used;
  for (const auto& op : a.ops) {
    ++c.compared;
    std::string want = op.is_coll ? op.func : mirror(op.func);
    auto& list = b_by_func[want];
    std::size_t i = used[want]++;
    const TruthOp* other = i < list.size() ? list[i] : nullptr;
    bool same = other != nullptr && other->count == op.count && other->channels == op.channels &&
                (!op.is_coll || (other->algo == op.algo && other->proto == op.proto));
    if (same) {
      ++c.matched;
    } else if (c.first_mismatch.empty()) {
      c.first_mismatch =
          other == nullptr ? fmt::format("rank {} {} #{} has no counterpart on rank {}", a.rank, op.func, i, b.rank)
                           : fmt::format("rank {} {} #{} count {} channels {{{}}}; rank {} {} count {} channels {{{}}}",
                                         a.rank, op.func, i, op.count, fmt::join(op.channels, ","), b.rank, other->func,
                                         other->count, fmt::join(other->channels, ","));
    }
  }
  if (a.plans != b.plans && c.first_mismatch.empty()) {
    c.first_mismatch = fmt::format("rank {} ran {} plans, rank {} ran {}", a.rank, a.plans, b.rank, b.plans);
  }
  return c;
}

}  // namespace railcheck::plan

namespace railcheck::plan {

int ring_tree_channels_2_28(std::uint64_t nbytes, int comm_channels, int max_threads, int thread_threshold) {
  int nc = comm_channels < 1 ? 1 : comm_channels;
  const auto per_channel = static_cast<std::uint64_t>(max_threads < 0 ? 0 : max_threads) *
                           static_cast<std::uint64_t>(thread_threshold < 0 ? 0 : thread_threshold);
  while (nc >= 2 && nbytes < static_cast<std::uint64_t>(nc) * per_channel) --nc;
  return nc;
}

}  // namespace railcheck::plan
