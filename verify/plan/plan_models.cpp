// Model files of the plan worlds (plan_models.hpp).
#include "verify/plan/plan_models.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "models/toml_reader.hpp"
#include "verify/check_spec.hpp"
#include "verify/plan/channel_search.hpp"

namespace railcheck::plan {
namespace {

constexpr std::string_view kDocs = "see docs/verify.md for the model file format";
constexpr std::size_t kMaxValues = 4;  // per list of the bound: each multiplies the worlds

template <typename World>
std::vector<std::string> names_of(std::span<const verify::Invariant<World>> invs) {
  std::vector<std::string> out;
  for (const auto& inv : invs) out.push_back(inv.name);
  return out;
}

// A list of the bound: 1..kMaxValues values, each within `each`, no repeats.
template <typename T>
std::vector<T> read_values(TomlTable& t, std::string_view key, Bounds each, std::vector<T> fallback) {
  if (t.raw() == nullptr || !t.raw()->contains(key)) return fallback;
  const auto raw = t.whole_array(key, each);
  std::vector<T> out(raw.begin(), raw.end());
  if (out.empty() || out.size() > kMaxValues) {
    t.fail(key, fmt::format("1 to {} values", kMaxValues), fmt::format("{} values", out.size()));
    return fallback;
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[i] == out[j]) t.fail(key, "distinct values", fmt::format("{} twice", out[i]));
  return out;
}

Result<toml::table> parse(std::string_view text, const std::string& file) { return parse_toml(text, file, kDocs); }

void read_channel_bounds(TomlTable t, ChannelWorldBound& b) {
  t.allow_only(
      {"min_ranks", "max_ranks", "max_collectives", "transfer_bytes", "collective_channels", "work_fifo_depths"});
  b.min_ranks = t.whole<std::uint32_t>("min_ranks", {1, 4}).value_or(b.min_ranks);
  b.max_ranks = t.whole<std::uint32_t>("max_ranks", {1, 4}).value_or(b.max_ranks);
  if (b.min_ranks > b.max_ranks)
    t.fail("max_ranks", fmt::format("at least min_ranks = {}", b.min_ranks), fmt::format("{}", b.max_ranks));
  b.max_colls = t.whole<std::uint32_t>("max_collectives", {1, 4}).value_or(b.max_colls);
  b.transfer_bytes = read_values<std::uint64_t>(t, "transfer_bytes", {1, 1ULL << 30}, b.transfer_bytes);
  b.coll_channel_counts = read_values<std::uint32_t>(t, "collective_channels", {1, 64}, b.coll_channel_counts);
  b.work_fifo_depths = read_values<std::uint32_t>(t, "work_fifo_depths", {1, 1U << 24}, b.work_fifo_depths);
}

void read_comm(TomlTable t, ChannelWorldBound& b) {
  t.allow_only({"coll_channels", "p2p_channels", "p2p_channels_per_peer"});
  CommShape& s = b.shape;
  s.coll_channels = t.whole<std::uint32_t>("coll_channels", {1, 64}).value_or(s.coll_channels);
  s.p2p_channels = t.whole<std::uint32_t>("p2p_channels", {1, 64}).value_or(s.p2p_channels);
  s.p2p_channels_per_peer = t.whole<std::uint32_t>("p2p_channels_per_peer", {1, 64}).value_or(s.p2p_channels_per_peer);
  if (auto ok = validated(s); !ok) t.fail_here("a communicator NCCL could build", ok.error().what, ok.error().hint);
  for (const auto c : b.coll_channel_counts)
    if (c > s.coll_channels)
      t.fail("coll_channels", fmt::format("at least every collective_channels value ({})", c),
             fmt::format("{}", s.coll_channels));
}

}  // namespace

Result<PlanCheckSpec<ChannelModel>> load_channel_model(std::string_view text, const std::string& file) {
  auto doc = parse(text, file);
  if (!doc) return doc.error();
  TomlReader reader(file);
  TomlTable root(reader, &doc.value(), "");
  root.allow_only({"name", "world", "policy", "invariants", "bounds", "comm", "search"});
  PlanCheckSpec<ChannelModel> spec;
  spec.model.name = root.text("name").value_or(std::filesystem::path(file).stem().string());
  if (auto p = root.text("policy")) {
    if (policy_by_name(*p)) {
      spec.model.policy = *p;
    } else {
      root.fail("policy", fmt::format("one of {}", policy_names()), fmt::format("\"{}\"", *p));
    }
  }
  read_channel_bounds(root.table("bounds"), spec.model.bound);
  read_comm(root.table("comm"), spec.model.bound);
  verify::read_search_table(root.table("search"), spec.limits);
  spec.invariants = verify::read_invariant_names(root, names_of(channel_invariants()));
  if (reader.failed()) return *reader.error();
  return spec;
}

Result<PlanCheckSpec<LifecycleModel>> load_lifecycle_model(std::string_view text, const std::string& file) {
  auto doc = parse(text, file);
  if (!doc) return doc.error();
  TomlReader reader(file);
  TomlTable root(reader, &doc.value(), "");
  root.allow_only({"name", "world", "invariants", "bounds", "search"});
  PlanCheckSpec<LifecycleModel> spec;
  spec.model.name = root.text("name").value_or(std::filesystem::path(file).stem().string());
  TomlTable b = root.table("bounds");
  b.allow_only({"launches", "poll_anywhere"});
  spec.model.bound.launches = b.whole<std::uint32_t>("launches", {1, 4}).value_or(spec.model.bound.launches);
  spec.model.bound.poll_anywhere = verify::read_flag(b, "poll_anywhere").value_or(spec.model.bound.poll_anywhere);
  verify::read_search_table(root.table("search"), spec.limits);
  spec.invariants = verify::read_invariant_names(root, names_of(lifecycle_invariants()));
  if (reader.failed()) return *reader.error();
  return spec;
}

std::string to_model_toml(const ChannelModel& m) {
  const auto& b = m.bound;
  return fmt::format(
      "name = \"{}\"\nworld = \"plan-channels\"\npolicy = \"{}\"\n\n[bounds]\nmin_ranks = {}\nmax_ranks = {}\n"
      "max_collectives = {}\ntransfer_bytes = [{}]\ncollective_channels = [{}]\nwork_fifo_depths = [{}]\n\n"
      "[comm]\ncoll_channels = {}\np2p_channels = {}\np2p_channels_per_peer = {}\n",
      m.name, m.policy, b.min_ranks, b.max_ranks, b.max_colls, fmt::join(b.transfer_bytes, ", "),
      fmt::join(b.coll_channel_counts, ", "), fmt::join(b.work_fifo_depths, ", "), b.shape.coll_channels,
      b.shape.p2p_channels, b.shape.p2p_channels_per_peer);
}

std::string to_model_toml(const LifecycleModel& m) {
  return fmt::format("name = \"{}\"\nworld = \"plan-lifecycle\"\n\n[bounds]\nlaunches = {}\npoll_anywhere = {}\n",
                     m.name, m.bound.launches, m.bound.poll_anywhere);
}

std::string describe(const ChannelModel& m) {
  const auto& b = m.bound;
  return fmt::format(
      "{} policy, {}-{} ranks, each ordered pair sends nothing or {{{}}} bytes, 1-{} collectives on {{{}}} of {} "
      "channels, work FIFO depth {{{}}}{}",
      m.policy, b.min_ranks, b.max_ranks, fmt::join(b.transfer_bytes, ", "), b.max_colls,
      fmt::join(b.coll_channel_counts, ", "), b.shape.coll_channels, fmt::join(b.work_fifo_depths, ", "),
      policy_by_name(m.policy) && policy_by_name(m.policy)->p2p_pre_scheduled
          ? ", every mix of p2p done before the group ended"
          : "");
}

std::string describe(const LifecycleModel& m) {
  return fmt::format(
      "{} launches (each persistent or not, with or without proxy ops), launch blocking or not; callbacks polled {}",
      m.bound.launches,
      m.bound.poll_anywhere ? "anywhere (as if another thread polled)" : "only in ncclLaunchPrepare (NCCL's rule)");
}

}  // namespace railcheck::plan
