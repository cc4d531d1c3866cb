#include "backends/hw/conform/message_stream.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railcheck::conform {

std::uint64_t tag_of(std::uint64_t i) { return i * 7 + 3; }

std::size_t size_of(const StreamSpec& s, std::uint64_t i) {
  if (s.fixed_size) return *s.fixed_size;
  std::uint64_t x = (s.seed ^ (i * 0x9E3779B97F4A7C15ULL)) * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 31;
  return static_cast<std::size_t>(x % (s.max_size + 1));
}

void fill_message(std::uint64_t seed, std::uint64_t i, std::uint8_t* p, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) p[k] = static_cast<std::uint8_t>((seed * 31 + i * 131 + k * 7) >> 1);
  for (std::size_t k = 0; k < std::min<std::size_t>(n, 8); ++k) p[k] = static_cast<std::uint8_t>(i >> (8 * k));
}

std::string check_message(std::uint64_t seed, std::uint64_t i, const std::uint8_t* p, std::size_t n, std::size_t got) {
  if (got != n) return fmt::format("message {} (tag {}): {} bytes arrived, {} expected", i, tag_of(i), got, n);
  std::vector<std::uint8_t> want(n);
  fill_message(seed, i, want.data(), n);
  const auto diff = std::mismatch(want.begin(), want.end(), p);
  if (diff.first == want.end()) return {};
  std::uint64_t named = 0;
  for (std::size_t b = 0; b < std::min<std::size_t>(n, 8); ++b) named |= static_cast<std::uint64_t>(p[b]) << (8 * b);
  return fmt::format("message {} (tag {}): byte {} differs; the buffer names message {}", i, tag_of(i),
                     diff.first - want.begin(), named);
}

StreamSender::StreamSender(FabricConnection& c, StreamSpec spec, CutAction cut)
    : c_(c), spec_(spec), cut_(std::move(cut)) {}

bool StreamSender::step() {
  if (!error_.empty()) return false;
  c_.progress();
  while (!inflight_.empty()) {
    auto r = c_.test(inflight_.front().id);
    if (!r) break;
    if (!r->ok) {
      error_ = fmt::format("send {} failed: {}", completed_, r->error);
      return false;
    }
    (void)c_.deregister_memory(inflight_.front().mr);
    inflight_.pop_front();
    ++completed_;
  }
  while (c_.ready() && next_ < spec_.messages && inflight_.size() < spec_.window) {
    if (spec_.cut_primary_after && next_ == *spec_.cut_primary_after && !cut_done_) {
      // Cut only once a standby is up: before phase 2 finishes there is nothing to fail over
      // to, and the connection rightly fails.
      const ConnectionStats st = c_.stats();
      if (!std::any_of(st.rails.begin() + 1, st.rails.end(), [](const RailStats& r) { return r.ready; })) break;
      cut_done_ = true;
      if (cut_) {
        if (auto why = cut_(); !why.empty()) {
          error_ = "injecting the fault: " + why;
          return false;
        }
      } else {
        c_.cut_rail(PathIndex{0});
      }
    }
    Slot s;
    s.buf.resize(std::max<std::size_t>(size_of(spec_, next_), 1));
    const std::size_t n = size_of(spec_, next_);
    fill_message(spec_.seed, next_, s.buf.data(), n);
    auto mr = c_.register_memory(s.buf.data(), s.buf.size());
    if (!mr) {
      error_ = "register_memory: " + mr.error().message();
      return false;
    }
    s.mr = mr.value();
    auto id = c_.isend(s.buf.data(), n, tag_of(next_), s.mr);
    if (!id) {
      error_ = "isend: " + id.error().message();
      return false;
    }
    s.id = id.value();
    inflight_.push_back(std::move(s));
    ++next_;
  }
  if (c_.failed()) {
    error_ = "the connection failed: no usable rail left";
    return false;
  }
  return true;
}

StreamReceiver::StreamReceiver(FabricConnection& c, StreamSpec spec) : c_(c), spec_(spec) {}

bool StreamReceiver::step() {
  if (!error_.empty()) return false;
  c_.progress();
  while (!inflight_.empty()) {
    Group& g = inflight_.front();
    auto r = c_.test(g.id);
    if (!r) break;
    if (!r->ok) {
      error_ = fmt::format("receive of messages {}.. failed: {}", g.first, r->error);
      return false;
    }
    if (r->sizes.size() != g.bufs.size()) {
      error_ = fmt::format("grouped receive of {} buffers reported {} sizes", g.bufs.size(), r->sizes.size());
      return false;
    }
    for (std::size_t j = 0; j < g.bufs.size(); ++j) {
      auto what = check_message(spec_.seed, g.first + j, g.bufs[j].data(), size_of(spec_, g.first + j), r->sizes[j]);
      if (!what.empty()) {
        error_ = fmt::format("seed {}: {}", spec_.seed, what);
        return false;
      }
      ++verified_;
    }
    for (auto* m : g.mrs) (void)c_.deregister_memory(m);
    inflight_.pop_front();
  }
  while (c_.ready() && next_ < spec_.messages && inflight_.size() * spec_.max_group < spec_.window) {
    Group g;
    g.first = next_;
    const std::uint64_t n =
        std::min<std::uint64_t>(1 + group_turn_++ % std::max(1U, spec_.max_group), spec_.messages - next_);
    std::vector<void*> data;
    std::vector<std::size_t> sizes;
    std::vector<std::uint64_t> tags;
    for (std::uint64_t j = 0; j < n; ++j) {
      // Room for the largest message: the receiver does not know which size comes.
      const std::size_t room = spec_.fixed_size ? *spec_.fixed_size : spec_.max_size;
      g.bufs.emplace_back(std::max<std::size_t>(room, 1), std::uint8_t{0xEE});
      auto mr = c_.register_memory(g.bufs.back().data(), g.bufs.back().size());
      if (!mr) {
        error_ = "register_memory: " + mr.error().message();
        return false;
      }
      g.mrs.push_back(mr.value());
      data.push_back(g.bufs.back().data());
      sizes.push_back(room);
      tags.push_back(tag_of(next_ + j));
    }
    auto id = c_.irecv(data, sizes, tags, g.mrs);
    if (!id) {
      error_ = "irecv: " + id.error().message();
      return false;
    }
    g.id = id.value();
    next_ += n;
    inflight_.push_back(std::move(g));
  }
  if (c_.failed()) {
    error_ = "the connection failed: no usable rail left";
    return false;
  }
  return true;
}

}  // namespace railcheck::conform
