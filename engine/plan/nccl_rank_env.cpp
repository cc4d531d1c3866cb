// One rank's NCCL settings: read, applied, compared (nccl_rank_env.hpp).
#include "engine/plan/nccl_rank_env.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "engine/plan/nccl228_enable_list.hpp"

namespace railcheck::plan {
namespace {

std::vector<std::string> words(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<std::int64_t> integer(std::string_view s) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> integer_setting(const RankEnv& env, std::string_view var) {
  const EnvSetting* s = env.find(var);
  return s ? integer(s->value) : std::nullopt;
}

// A value NCCL would refuse or misread, checked where it is given so that a typo stops at once.
Result<bool> check_value(std::string_view var, std::string_view value, std::string_view origin) {
  AlgoProtoEnable scratch;
  if (var == "NCCL_PROTO" || var == "NCCL_ALGO") {
    auto ok = var == "NCCL_PROTO" ? apply_nccl_proto(value, scratch) : apply_nccl_algo(value, scratch);
    if (!ok) return Error{fmt::format("{}: {}", origin, ok.error().what), ok.error().hint};
    return true;
  }
  if (!integer(value))
    return Error{fmt::format("{}: {}={} is not an integer", origin, var, value),
                 "NCCL reads it with strtoll (src/misc/param.cc) and would ignore it"};
  return true;
}

// 2.28.9 src/init.cc: DEFAULT_BUFFSIZE, DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE.
constexpr std::uint64_t kDefaultSimpleBuff = 1ULL << 22;
constexpr std::uint64_t kDefaultLlBuff = 8ULL * 512 * 8 * 16;      // LL lines/thread x threads x steps x 16 B
constexpr std::uint64_t kDefaultLl128Buff = 120ULL * 640 * 8 * 8;  // LL128 elems/thread x threads x steps x 8 B
constexpr std::uint64_t kNcclSteps = 8;
constexpr int kWarp = 32;

}  // namespace

std::string_view name(PlanField f) {
  switch (f) {
    case PlanField::Algorithm: return "algorithm";
    case PlanField::Protocol: return "protocol";
    case PlanField::Channels: return "channels";
    case PlanField::Threads: return "threads";
    case PlanField::Chunking: return "chunking";
    case PlanField::P2p: return "p2p chunking";
  }
  return "?";
}

const PlanKnob* plan_knob(std::string_view var) {
  for (const auto& k : kPlanKnobs)
    if (k.var == var) return &k;
  return nullptr;
}

const EnvSetting* RankEnv::find(std::string_view var) const {
  auto it = values.find(var);
  return it == values.end() ? nullptr : &it->second;
}

std::string RankEnv::describe(std::string_view var) const {
  if (const EnvSetting* s = find(var)) return fmt::format("{}={} ({})", var, s->value, s->origin);
  return fmt::format("{} not set (NCCL's default)", var);
}

RankEnv env_from_log(std::string_view text, std::string_view origin) {
  RankEnv out;
  constexpr std::string_view kSet = " set by environment to ";
  std::size_t line = 1, pos = 0;
  while (pos < text.size()) {
    const auto end = std::min(text.find('\n', pos), text.size());
    const std::string_view l = text.substr(pos, end - pos);
    if (const auto at = l.find(kSet); at != std::string_view::npos && l.find(" NCCL INFO ") != std::string_view::npos) {
      out.log_has_env_lines = true;
      const auto info = l.rfind(" NCCL INFO ", at);
      const std::string_view var = l.substr(info + 11, at - info - 11);
      std::string_view value = l.substr(at + kSet.size());
      while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.remove_suffix(1);
      // NCCL_PARAM lines end in '.' ("%s set by environment to %lld."); NCCL_ALGO/PROTO lines do not.
      if (const PlanKnob* k = plan_knob(var); k != nullptr) {
        if (k->var != "NCCL_ALGO" && k->var != "NCCL_PROTO" && value.ends_with('.')) value.remove_suffix(1);
        out.values.try_emplace(std::string(var), EnvSetting{std::string(value), fmt::format("{}:{}", origin, line)});
      }
    }
    pos = end + 1;
    ++line;
  }
  return out;
}

RankEnv GivenEnv::for_rank(std::uint32_t rank) const {
  auto it = by_rank.find(rank);
  return it == by_rank.end() ? every_rank : prefer(it->second, every_rank);
}

Result<GivenEnv> env_from_option(std::string_view text, std::string_view origin) {
  GivenEnv out;
  for (const auto& w : words(text)) {
    std::string_view entry = w;
    RankEnv* into = &out.every_rank;
    if (const auto colon = entry.find(':'); colon != std::string_view::npos && colon < entry.find('=')) {
      const auto rank = integer(entry.substr(0, colon));
      if (!rank || *rank < 0 || *rank >= kMaxRanks)
        return Error{fmt::format("{} \"{}\": \"{}\" has no rank before ':'", origin, text, w),
                     "e.g. --nccl-env '1:NCCL_PROTO=LL' (rank 1 only) or 'NCCL_PROTO=LL' (every rank)"};
      into = &out.by_rank[static_cast<std::uint32_t>(*rank)];
      entry.remove_prefix(colon + 1);
    }
    const auto eq = entry.find('=');
    const std::string_view var = entry.substr(0, eq);
    if (eq == std::string_view::npos || plan_knob(var) == nullptr) {
      std::string known;
      for (const auto& k : kPlanKnobs) known += (known.empty() ? "" : ", ") + std::string(k.var);
      return Error{
          fmt::format("{} \"{}\": \"{}\" is not [RANK:]NAME=VALUE of a setting the model reads", origin, text, w),
          "the settings read: " + known};
    }
    const std::string_view value = entry.substr(eq + 1);
    if (auto ok = check_value(var, value, origin); !ok) return ok.error();
    if (!into->values.try_emplace(std::string(var), EnvSetting{std::string(value), std::string(origin)}).second)
      return Error{fmt::format("{} \"{}\": {} given twice for the same ranks", origin, text, var), ""};
  }
  return out;
}

GivenEnv env_from_env_txt(std::string_view text, std::string_view origin) {
  GivenEnv out;
  std::istringstream in{std::string(text)};
  std::size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    RankEnv* into = nullptr;
    const auto w = words(line);
    std::size_t first = 0;
    if (w.size() >= 2 && w[0] == "#" && w[1] == "env") {
      into = &out.every_rank;
      first = 2;
    } else if (w.size() >= 4 && w[0] == "#" && w[1] == "rank" && w[3] == "env") {
      const auto rank = integer(w[2]);
      if (!rank || *rank < 0 || *rank >= kMaxRanks) continue;
      into = &out.by_rank[static_cast<std::uint32_t>(*rank)];
      first = 4;
    }
    if (into == nullptr) continue;
    for (std::size_t i = first; i < w.size(); ++i) {
      const auto eq = w[i].find('=');
      if (eq == std::string::npos || plan_knob(std::string_view(w[i]).substr(0, eq)) == nullptr) continue;
      into->values.insert_or_assign(w[i].substr(0, eq),
                                    EnvSetting{w[i].substr(eq + 1), fmt::format("{}:{}", origin, lineno)});
    }
  }
  return out;
}

RankEnv prefer(const RankEnv& first, const RankEnv& second) {
  RankEnv out = first;
  for (const auto& [var, s] : second.values) out.values.try_emplace(var, s);
  out.log_has_env_lines = first.log_has_env_lines || second.log_has_env_lines;
  return out;
}

int nccl_get_nthreads(std::optional<std::int64_t> env, int min, int max, int def) {
  if (!env || *env <= 0) return def;
  if (*env % kWarp != 0 || *env > max) return max;
  if (*env < min) return min;
  return static_cast<int>(*env);
}

Result<std::vector<std::string>> apply_rank_env(const RankEnv& env, const OwnInitFacts& own, CommShape& shape) {
  std::vector<std::string> notes;
  for (const auto& [var, s] : env.values)
    if (auto ok = check_value(var, s.value, s.origin); !ok) return ok.error();
  auto& p = shape.v228;
  // NCCL_ALGO / NCCL_PROTO (nccl228_algo_proto_env.hpp's grammar and contradiction check).
  AlgoProtoSettings ap;
  if (const EnvSetting* s = env.find("NCCL_ALGO")) ap.algo = *s;
  if (const EnvSetting* s = env.find("NCCL_PROTO")) ap.proto = *s;
  auto applied = apply_algo_proto_settings(ap, shape);
  if (!applied) return applied.error();
  notes.insert(notes.end(), applied->notes.begin(), applied->notes.end());
  notes.insert(notes.end(), applied->conflicts.begin(), applied->conflicts.end());

  // comm->maxThreads (src/graph/tuning.cc ncclTopoTuneModel); Ring Simple's default depends on the
  // topology and is settled by the scheduler (nthreads_env), the rest here.
  const auto nthreads = integer_setting(env, "NCCL_NTHREADS");
  const auto ll128_nthreads = integer_setting(env, "NCCL_LL128_NTHREADS");
  p.nthreads_env = nthreads;
  if (!own.max_threads && (nthreads || ll128_nthreads)) {
    p.max_threads[kAlgoTree][kProtoSimple] = nccl_get_nthreads(nthreads, 2 * kWarp, 512, 512);
    p.max_threads[kAlgoRing][kProtoLL] = p.max_threads[kAlgoTree][kProtoLL] =
        nccl_get_nthreads(nthreads, 2 * kWarp, 512, 512);
    p.max_threads[kAlgoRing][kProtoLL128] = p.max_threads[kAlgoTree][kProtoLL128] =
        nccl_get_nthreads(ll128_nthreads, 640 / 4, 640, 640);
    notes.push_back(fmt::format("thread table from {}{}", nthreads ? env.describe("NCCL_NTHREADS") : "",
                                ll128_nthreads ? " " + env.describe("NCCL_LL128_NTHREADS") : ""));
  }

  // buffSizes (src/init.cc computeBuffSizes): the step every connection's slots hold.
  const auto buff = [&](std::string_view var, std::uint64_t def) {
    const auto v = integer_setting(env, var);
    if (!v || *v == -2 || *v <= 0) return def;
    notes.push_back(fmt::format("buffer size from {}", env.describe(var)));
    return static_cast<std::uint64_t>(*v);
  };
  p.simple_buff_bytes = buff("NCCL_BUFFSIZE", kDefaultSimpleBuff);
  p.ll_buff_bytes = buff("NCCL_LL_BUFFSIZE", kDefaultLlBuff);
  p.ll128_buff_bytes = buff("NCCL_LL128_BUFFSIZE", kDefaultLl128Buff);

  if (!own.p2p_chunk) {
    // computeBuffSizes: NET across nodes, NVL on one all-NVLink node, else PCI; never above a Simple step.
    const bool multi_node = p.nodes(shape.nranks) > 1;
    const bool nvlink = p.intra_link == Nccl228Params::IntraLink::P2p;
    const char* var = multi_node ? "NCCL_P2P_NET_CHUNKSIZE"
                      : nvlink   ? "NCCL_P2P_NVL_CHUNKSIZE"
                                 : "NCCL_P2P_PCI_CHUNKSIZE";
    const auto v = integer_setting(env, var);
    std::uint64_t chunk = p.p2p_chunk_bytes;
    if (v && *v > 0) chunk = static_cast<std::uint64_t>(*v);
    chunk = std::min(chunk, p.simple_buff_bytes / kNcclSteps);
    if (chunk != p.p2p_chunk_bytes) {
      notes.push_back(
          fmt::format("p2p chunk {} B from {} and NCCL_BUFFSIZE (init.cc computeBuffSizes)", chunk, env.describe(var)));
      p.p2p_chunk_bytes = chunk;
      shape.p2p_chunk_bytes = chunk;
    }
  }
  if (const auto v = integer_setting(env, "NCCL_P2P_LL_THRESHOLD"); v && *v >= 0) {
    p.p2p_ll_threshold = static_cast<std::uint64_t>(*v);
    notes.push_back(fmt::format("p2p LL threshold from {}", env.describe("NCCL_P2P_LL_THRESHOLD")));
  }
  if (!own.coll_channels) {
    // connect.cc ncclTopoPostset: min(MAX_NCHANNELS, MAX_CTAS, found), then up to MIN_NCHANNELS / MIN_CTAS.
    std::uint32_t c = shape.coll_channels;
    for (const char* var : {"NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS"})
      if (const auto v = integer_setting(env, var); v && *v >= 1)
        c = std::min<std::uint32_t>(c, static_cast<std::uint32_t>(*v));
    for (const char* var : {"NCCL_MIN_NCHANNELS", "NCCL_MIN_CTAS"})
      if (const auto v = integer_setting(env, var); v && *v >= 1)
        c = std::max<std::uint32_t>(c, std::min<std::uint32_t>(static_cast<std::uint32_t>(*v), kMaxChannels));
    if (c != shape.coll_channels) {
      notes.push_back(fmt::format("{} coll channels from the channel settings (no INIT channel line of its own)", c));
      shape.coll_channels = c;
    }
  }
  if (!own.p2p_channels)
    if (const auto v = integer_setting(env, "NCCL_NCHANNELS_PER_NET_PEER"); v && *v >= 1 && p.nodes(shape.nranks) > 1) {
      std::uint32_t per_peer = 1;
      while (per_peer * 2 <= static_cast<std::uint32_t>(*v) && per_peer * 2 <= shape.p2p_channels) per_peer *= 2;
      shape.p2p_channels_per_peer = per_peer;
      notes.push_back(
          fmt::format("{} p2p channels per peer from {}", per_peer, env.describe("NCCL_NCHANNELS_PER_NET_PEER")));
    }
  return notes;
}

bool same_tuner_inputs(const RankEnv& a, const RankEnv& b) {
  for (const auto& k : kPlanKnobs) {
    if (!k.tuner) continue;
    const EnvSetting* x = a.find(k.var);
    const EnvSetting* y = b.find(k.var);
    if ((x == nullptr) != (y == nullptr) || (x != nullptr && x->value != y->value)) return false;
  }
  return true;
}

std::vector<std::string> differing_settings(const RankEnv& a, std::uint32_t rank_a, const RankEnv& b,
                                            std::uint32_t rank_b, PlanField field) {
  // A tuner field (algorithm, protocol, channels, threads) can move with any tuner setting: the
  // field's own settings first, then the other tuner settings. Chunking and p2p have their own.
  const bool tuner_field = field == PlanField::Algorithm || field == PlanField::Protocol ||
                           field == PlanField::Channels || field == PlanField::Threads;
  std::vector<std::string> own, other;
  for (const auto& k : kPlanKnobs) {
    const EnvSetting* x = a.find(k.var);
    const EnvSetting* y = b.find(k.var);
    if ((x == nullptr) == (y == nullptr) && (x == nullptr || x->value == y->value)) continue;
    const std::string text =
        fmt::format("rank {}: {}; rank {}: {}", rank_b, b.describe(k.var), rank_a, a.describe(k.var));
    const bool same_field = k.field == field ||
                            (field == PlanField::Threads && k.field == PlanField::Channels &&
                             k.var.find("NTHREADS") != std::string_view::npos) ||
                            (field == PlanField::P2p && k.var == "NCCL_BUFFSIZE");
    if (same_field)
      own.push_back(text);
    else if (tuner_field && k.tuner)
      other.push_back(text);
  }
  own.insert(own.end(), other.begin(), other.end());
  return own;
}

}  // namespace railcheck::plan
