#include "backends/hw/conform/write_imm_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "engine/imm/nic_sharding.hpp"

namespace railcheck::conform {

const char* to_string(WriteCaseKind k) {
  switch (k) {
    case WriteCaseKind::Counted: return "counted";
    case WriteCaseKind::ZeroLength: return "zero-length";
    case WriteCaseKind::Sharded: return "sharded";
  }
  return "?";
}

std::optional<WriteCaseKind> write_case_kind(const std::string& name) {
  for (auto k : {WriteCaseKind::Counted, WriteCaseKind::ZeroLength, WriteCaseKind::Sharded})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

std::uint8_t pattern_byte(std::uint64_t seed, std::uint64_t offset) {
  // Never 0 for a written byte, so "never written" (the target starts zeroed) is visible.
  std::uint64_t x = (seed * 0x9E3779B97F4A7C15ULL) ^ (offset * 0xBF58476D1CE4E5B9ULL);
  x ^= x >> 29;
  return static_cast<std::uint8_t>((x % 255) + 1);
}

Result<WritePlan> plan_writes(const WriteCaseSpec& spec) {
  if (spec.writes == 0) return Error{"a write case needs at least one write", ""};
  WritePlan plan;
  std::mt19937_64 rng(spec.seed);
  switch (spec.kind) {
    case WriteCaseKind::Counted: {
      // Sizes from 1 B to 64 KiB: inline/eager and rendezvous paths of the provider mixed, so
      // writes posted in order may land out of it. Eight immediates, each shared by several
      // writes: the counter, not the order, decides completion.
      std::uniform_int_distribution<std::uint64_t> size(1, 64 << 10);
      std::uint64_t off = 0;
      for (std::uint32_t k = 0; k < spec.writes; ++k) {
        const std::uint64_t len = k % 4 == 0 ? (1 + k % 7) : size(rng);
        const std::uint32_t imm = 0x1000 + k % 8;
        plan.writes.push_back(PlannedWrite{0, off, len, imm});
        ++plan.expected[imm];
        off += len;
      }
      plan.buffer_bytes = off;
      break;
    }
    case WriteCaseKind::ZeroLength: {
      // Both rails, four immediates; the buffer must stay untouched.
      for (std::uint32_t k = 0; k < spec.writes; ++k) {
        const std::uint32_t imm = 0x2000 + k % 4;
        plan.writes.push_back(PlannedWrite{k % 2, 0, 0, imm});
        ++plan.expected[imm];
      }
      plan.buffer_bytes = 4096;
      break;
    }
    case WriteCaseKind::Sharded: {
      const std::uint64_t len = std::uint64_t{spec.writes} * (16 << 10) + 777;
      imm::SingleWrite w{0, 0, 0, len};
      imm::ShardRule rule;
      rule.by = imm::ShardBy::Bytes;
      rule.nics = 2;
      rule.mtu = 4096;
      rule.max_piece_bytes = 64 << 10;
      auto pieces = imm::shard_write(imm::WriteShape{w}, imm::Regions{len, {len}}, rule);
      if (!pieces) return pieces.error();
      const std::uint32_t imm = 0x3000 + static_cast<std::uint32_t>(spec.seed % 0x1000);
      for (const auto& p : pieces.value()) {
        if (p.src_offset != p.dst_offset)
          return Error{fmt::format("sharding moved a piece: src {} dst {}", p.src_offset, p.dst_offset), ""};
        plan.writes.push_back(PlannedWrite{p.nic, p.dst_offset, p.length, imm});
      }
      // Posting order = the shards in a seeded shuffle: nothing may depend on which lands last.
      std::shuffle(plan.writes.begin(), plan.writes.end(), rng);
      plan.expected[imm] = imm::pieces_for(pieces.value(), 0);
      if (plan.expected[imm] != plan.writes.size())
        return Error{fmt::format("pieces_for says {} but {} pieces were made", plan.expected[imm], plan.writes.size()),
                     ""};
      plan.buffer_bytes = len;
      break;
    }
  }
  return plan;
}

std::string encode_target(const WriteTarget& t) {
  std::string s = std::to_string(t.addr.size());
  for (std::size_t i = 0; i < t.addr.size(); ++i) s += fmt::format(" {} {}", t.addr[i], t.key[i]);
  return s;
}

std::optional<WriteTarget> decode_target(const std::string& text) {
  std::istringstream in(text);
  std::size_t n = 0;
  if (!(in >> n) || n == 0 || n > 16) return std::nullopt;
  WriteTarget t;
  t.addr.resize(n);
  t.key.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!(in >> t.addr[i] >> t.key[i])) return std::nullopt;
  return t;
}

// ---- initiator ----

WriteInitiator::WriteInitiator(FabricConnection& c, WriteCaseSpec spec, WriteTarget target)
    : c_(c), spec_(spec), target_(std::move(target)) {
  auto plan = plan_writes(spec_);
  if (!plan) {
    error_ = plan.error().message();
    return;
  }
  plan_ = std::move(plan).value();
  src_.resize(std::max<std::size_t>(plan_.buffer_bytes, 1));
  for (std::size_t i = 0; i < src_.size(); ++i) src_[i] = pattern_byte(spec_.seed, i);
  auto mr = c_.register_memory(src_.data(), src_.size());
  if (!mr) {
    error_ = "register_memory: " + mr.error().message();
    return;
  }
  mr_ = mr.value();
}

WriteInitiator::~WriteInitiator() {
  if (mr_) (void)c_.deregister_memory(mr_);
}

bool WriteInitiator::step() {
  if (!error_.empty()) return false;
  if (posted_ < plan_.writes.size()) {
    // Every rail the plan uses must have its peer, which for a standby means phase 2 is done.
    const ConnectionStats st = c_.stats();
    bool rails_up = c_.ready();
    for (const auto& w : plan_.writes)
      rails_up = rails_up && w.rail < st.rails.size() && st.rails[w.rail].ready && c_.rail_connected(PathIndex{w.rail});
    if (c_.failed()) error_ = "the connection failed before the writes";
    if (!rails_up) {
      c_.progress();
      return error_.empty();
    }
    for (; posted_ < plan_.writes.size(); ++posted_) {
      const PlannedWrite& w = plan_.writes[posted_];
      if (w.rail >= target_.addr.size()) {
        error_ =
            fmt::format("the target named {} rails; write {} goes on rail {}", target_.addr.size(), posted_, w.rail);
        return false;
      }
      auto id = c_.write_imm(PathIndex{w.rail}, src_.data() + w.offset, w.length, mr_, target_.addr[w.rail] + w.offset,
                             target_.key[w.rail], w.imm);
      if (!id) {
        error_ = fmt::format("write {} ({} B on rail {}): {}", posted_, w.length, w.rail, id.error().message());
        return false;
      }
    }
  }
  batch_.clear();
  c_.completed_writes(batch_);
  for (const auto& d : batch_) {
    if (!d.ok) {
      error_ = fmt::format("write id {} failed at the initiator: {}", d.id, d.error);
      return false;
    }
    ++completed_;
  }
  return true;
}

// ---- target ----

WriteReceiver::WriteReceiver(FabricConnection& c, WriteCaseSpec spec) : c_(c), spec_(spec) {
  auto plan = plan_writes(spec_);
  if (!plan) {
    error_ = plan.error().message();
    return;
  }
  plan_ = std::move(plan).value();
  dst_.assign(plan_.buffer_bytes, 0);
  auto mr = c_.register_memory(dst_.data(), dst_.size());
  if (!mr) {
    error_ = "register_memory: " + mr.error().message();
    return;
  }
  mr_ = mr.value();
  // Half the expectations now, half when their first write has landed (ImmEvent::Held): writes
  // may arrive before the receiver asks for them.
  std::size_t i = 0;
  for (const auto& [imm, count] : plan_.expected) {
    if (i++ % 2 != 0) continue;
    auto e = counter_.expect(imm, count);
    if (!e) error_ = "expect: " + e.error().message();
  }
}

WriteReceiver::~WriteReceiver() {
  if (mr_) (void)c_.deregister_memory(mr_);
}

Result<WriteTarget> WriteReceiver::target() {
  if (!error_.empty()) return Error{error_, ""};
  WriteTarget t;
  for (std::uint32_t r = 0; r < c_.stats().rails.size(); ++r) {
    auto addr = c_.remote_address(mr_, PathIndex{r}, 0);
    if (!addr) return addr.error();
    auto key = c_.remote_key(mr_, PathIndex{r});
    if (!key) return key.error();
    t.addr.push_back(addr.value());
    t.key.push_back(key.value());
  }
  return t;
}

bool WriteReceiver::step() {
  if (!error_.empty()) return false;
  batch_.clear();
  c_.landed_imms(batch_);
  for (const std::uint32_t imm : batch_) {
    ++landed_;
    const auto want = plan_.expected.find(imm);
    if (want == plan_.expected.end()) {
      error_ = fmt::format("an immediate nobody sent landed: {:#x} (seed {})", imm, spec_.seed);
      return false;
    }
    imm::ImmEvent ev = counter_.on_arrival(imm);
    if (ev == imm::ImmEvent::Held) {
      auto e = counter_.expect(imm, want->second);
      if (!e) {
        error_ = "expect: " + e.error().message();
        return false;
      }
      ev = e.value();
    }
    if (ev == imm::ImmEvent::Completed) {
      ++completions_;
      ++completed_by_imm_[imm];
    }
  }
  return true;
}

std::string WriteReceiver::verify() {
  if (!error_.empty()) return error_;
  (void)step();
  if (!error_.empty()) return error_;
  for (const auto& [imm, count] : plan_.expected) {
    const auto it = completed_by_imm_.find(imm);
    const std::uint32_t times = it == completed_by_imm_.end() ? 0 : it->second;
    if (times != 1 || !counter_.completed(imm))
      return fmt::format("imm {:#x} (expecting {}) completed {} times with {} arrivals (seed {})", imm, count, times,
                         counter_.arrived(imm), spec_.seed);
  }
  if (counter_.over_arrivals() != 0)
    return fmt::format("{} over-arrivals (a write landed twice; seed {})", counter_.over_arrivals(), spec_.seed);
  if (auto a = counter_.audit(); !a.empty())
    return fmt::format("imm {:#x}: expected {}, arrived {} (seed {})", a.front().imm, a.front().expected,
                       a.front().arrived, spec_.seed);
  if (landed_ != plan_.writes.size())
    return fmt::format("{} immediates landed for {} writes (seed {})", landed_, plan_.writes.size(), spec_.seed);
  // Bytes: every written range holds the pattern, everything else is still zero.
  std::vector<bool> written(dst_.size(), false);
  for (const auto& w : plan_.writes)
    for (std::uint64_t b = w.offset; b < w.offset + w.length; ++b) written[b] = true;
  for (std::size_t b = 0; b < dst_.size(); ++b) {
    const std::uint8_t want = written[b] ? pattern_byte(spec_.seed, b) : 0;
    if (dst_[b] != want)
      return fmt::format("byte {} of the target buffer is {:#04x}, expected {:#04x} (seed {})", b, dst_[b], want,
                         spec_.seed);
  }
  return {};
}

}  // namespace railcheck::conform
