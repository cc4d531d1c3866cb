// The flag programs run by RankRunner over host memory standing in for the ranks' windows, in
// seeded random interleavings: every collective produces the reference result with no buffer
// outside the ranks' own inputs and outputs, back to back over several calls; a dead rank turns
// into a timeout error on every other rank.
#include <catch2/catch.hpp>
#include <cstring>
#include <numeric>
#include <vector>

#include "engine/core/rng.hpp"
#include "engine/zerobuf/rank_runner.hpp"

using namespace railcheck;
using namespace railcheck::zerobuf;

namespace {

constexpr std::uint64_t kWindow = 1 << 16;

// n windows, each with a flag area at offset 0, driven step by step in a seeded order.
struct HostWorld {
  std::uint32_t n;
  std::vector<std::vector<std::uint8_t>> mem;
  std::vector<RankRunner> ranks;
  std::vector<bool> dead;
  Nanos now{0};

  HostWorld(std::uint32_t nranks, Nanos timeout) : n(nranks), mem(nranks, std::vector<std::uint8_t>(kWindow, 0)) {
    for (std::uint32_t r = 0; r < n; ++r) ranks.emplace_back(r, n, timeout);
    dead.assign(n, false);
  }
  FlagSlot& slot(std::uint32_t owner, FlagKind k, std::uint32_t from) {
    return *reinterpret_cast<FlagSlot*>(mem[owner].data() + flag_slot_offset(k, from, n));
  }
  float* f32(std::uint32_t r, std::uint64_t off) { return reinterpret_cast<float*>(mem[r].data() + off); }

  // One step of rank r; false when it is blocked on a Wait.
  bool step(std::uint32_t r) {
    RankRunner& k = ranks[r];
    const FlagStep s = k.step();
    switch (s.kind) {
      case StepKind::Post: {
        FlagSlot& f = slot(s.peer, s.flag, r);
        f.offset = s.post_offset;
        f.epoch = s.epoch;
        break;
      }
      case StepKind::Wait: return k.offer(slot(r, s.flag, s.peer).epoch, now);
      case StepKind::Write: {
        const std::uint64_t dst = slot(r, FlagKind::Ready, s.peer).offset + s.remote_add;
        std::memcpy(mem[s.peer].data() + dst, mem[r].data() + s.local_offset, s.bytes);
        break;
      }
      case StepKind::Read: {
        const std::uint64_t src = slot(r, FlagKind::Posted, s.peer).offset + s.remote_add;
        if (s.reduce == Reduce::SumF32) {
          for (std::uint64_t i = 0; i < s.bytes / 4; ++i) f32(r, s.local_offset)[i] += f32(s.peer, src)[i];
        } else {
          std::memcpy(mem[r].data() + s.local_offset, mem[s.peer].data() + src, s.bytes);
        }
        break;
      }
      case StepKind::Local: std::memmove(mem[r].data() + s.local_offset, mem[r].data() + s.src_offset, s.bytes); break;
    }
    k.step_done();
    return true;
  }

  // Runs every live rank's current call to its end (or failure) in a random order.
  void run(SeededRng& rng) {
    for (;;) {
      std::vector<std::uint32_t> live;
      for (std::uint32_t r = 0; r < n; ++r)
        if (!dead[r] && ranks[r].state() == RunnerState::Running) live.push_back(r);
      if (live.empty()) return;
      now += us(1);
      step(live[rng.below(live.size())]);
    }
  }
};

// Rank r's input at off + 256 B * r.
void fill(HostWorld& w, std::uint64_t off, std::uint64_t floats, int call) {
  for (std::uint32_t r = 0; r < w.n; ++r)
    for (std::uint64_t i = 0; i < floats; ++i)
      w.f32(r, off + 256 * r)[i] = static_cast<float>(1000 * call + 100 * r + i);
}

}  // namespace

TEST_CASE("every collective gives the reference result in random interleavings, call after call") {
  for (std::uint32_t n : {1u, 2u, 3u, 4u}) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      INFO("nranks " << n << " seed " << seed);
      SeededRng rng(seed);
      HostWorld w(n, sec(1));
      // Asymmetric placement: rank r's buffers sit 256 B * r further in than rank 0's.
      const std::uint64_t b = 4 * 6;  // bytes per part: 6 floats
      for (int call = 0; call < 6; ++call) {
        const CollKind kind = static_cast<CollKind>(call % 4);  // all-gather, reduce-scatter, all-reduce, all-to-all
        std::vector<CollCall> calls(n);
        for (std::uint32_t r = 0; r < n; ++r) {
          calls[r].kind = kind;
          calls[r].bytes = kind == CollKind::AllReduce ? b * n + 4 : b;
          calls[r].input_offset = 0x1000 + 256 * r;
          calls[r].output_offset =
              (kind == CollKind::AllReduce && call % 2 == 0) ? calls[r].input_offset : 0x4000 + 512 * r;
        }
        fill(w, 0x1000, 64, call);
        // Expected results from the inputs before the call.
        std::vector<std::vector<float>> in(n);
        for (std::uint32_t r = 0; r < n; ++r) in[r].assign(w.f32(r, 0x1000 + 256 * r), w.f32(r, 0x1000 + 256 * r) + 64);
        for (std::uint32_t r = 0; r < n; ++r) REQUIRE(w.ranks[r].start(calls[r], w.now).ok());
        w.run(rng);
        for (std::uint32_t r = 0; r < n; ++r) {
          REQUIRE(w.ranks[r].state() == RunnerState::Idle);
          const float* out = w.f32(r, calls[r].output_offset);
          const std::uint64_t f = b / 4;
          for (std::uint32_t p = 0; p < n; ++p)
            for (std::uint64_t i = 0; i < f; ++i) {
              switch (kind) {
                case CollKind::AllGather: REQUIRE(out[p * f + i] == in[p][i]); break;
                case CollKind::AllToAll: REQUIRE(out[p * f + i] == in[p][r * f + i]); break;
                case CollKind::ReduceScatter:
                  if (p == 0) {
                    float sum = 0;
                    for (std::uint32_t q = 0; q < n; ++q) sum += in[q][r * f + i];
                    REQUIRE(out[i] == sum);
                  }
                  break;
                default: break;
              }
            }
          if (kind == CollKind::AllReduce)
            for (std::uint64_t i = 0; i < calls[r].bytes / 4; ++i) {
              float sum = 0;
              for (std::uint32_t q = 0; q < n; ++q) sum += in[q][i];
              REQUIRE(out[i] == sum);
            }
        }
      }
      for (std::uint32_t r = 0; r < n; ++r) CHECK(w.ranks[r].calls_done() == 6);
    }
  }
}

TEST_CASE("dispatch and combine move uneven token counts there and back") {
  const std::uint32_t n = 3;
  // Rank s sends (s + d + 1) floats to rank d.
  auto count = [](std::uint32_t s, std::uint32_t d) { return static_cast<std::uint64_t>(4 * (s + d + 1)); };
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    INFO("seed " << seed);
    SeededRng rng(seed);
    HostWorld w(n, sec(1));
    std::vector<CollCall> there(n), back(n);
    for (std::uint32_t r = 0; r < n; ++r) {
      there[r].kind = CollKind::Dispatch;
      there[r].input_offset = 0x1000;
      there[r].output_offset = 0x3000 + 64 * r;
      std::uint64_t sd = 0, rd = 0;
      for (std::uint32_t p = 0; p < n; ++p) {
        there[r].send_bytes.push_back(count(r, p));
        there[r].send_displ.push_back(sd);
        there[r].recv_bytes.push_back(count(p, r));
        there[r].recv_displ.push_back(rd);
        sd += count(r, p);
        rd += count(p, r);
      }
      // Combine takes the dispatched tokens back: rank p pulls from rank r what r received from it.
      back[r] = there[r];
      back[r].kind = CollKind::Combine;
      back[r].input_offset = there[r].output_offset;
      back[r].output_offset = 0x6000;
      std::swap(back[r].send_bytes, back[r].recv_bytes);
      std::swap(back[r].send_displ, back[r].recv_displ);
      for (std::uint64_t i = 0; i < 64; ++i) w.f32(r, 0x1000)[i] = static_cast<float>(100 * r + i);
    }
    for (std::uint32_t r = 0; r < n; ++r) REQUIRE(w.ranks[r].start(there[r], w.now).ok());
    w.run(rng);
    for (std::uint32_t r = 0; r < n; ++r)
      for (std::uint32_t s = 0; s < n; ++s)
        for (std::uint64_t i = 0; i < count(s, r) / 4; ++i)
          REQUIRE(w.f32(r, there[r].output_offset + there[r].recv_displ[s])[i] ==
                  static_cast<float>(100 * s + there[s].send_displ[r] / 4 + i));
    for (std::uint32_t r = 0; r < n; ++r) REQUIRE(w.ranks[r].start(back[r], w.now).ok());
    w.run(rng);
    for (std::uint32_t r = 0; r < n; ++r) {
      REQUIRE(w.ranks[r].state() == RunnerState::Idle);
      for (std::uint64_t i = 0; i < there[r].send_displ.back() / 4 + count(r, n - 1) / 4; ++i)
        REQUIRE(w.f32(r, 0x6000)[i] == w.f32(r, 0x1000)[i]);  // every token came home in place
    }
  }
}

TEST_CASE("a dead rank becomes a timeout error naming it on every other rank") {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    INFO("seed " << seed);
    SeededRng rng(seed);
    HostWorld w(4, ms(5));
    w.dead[2] = true;  // never takes a step
    for (std::uint32_t r = 0; r < 4; ++r) {
      CollCall c{CollKind::AllReduce, 0x1000, 0x2000, 64};
      REQUIRE(w.ranks[r].start(c, w.now).ok());
    }
    w.run(rng);
    for (std::uint32_t r : {0u, 1u, 3u}) {
      REQUIRE(w.ranks[r].state() == RunnerState::Failed);
      REQUIRE(w.ranks[r].error().has_value());
      CHECK_THAT(w.ranks[r].error()->message(), Catch::Contains("timed out") && Catch::Contains("rank 2"));
    }
  }
}

TEST_CASE("epochs grow by one per phase, so no flag value is ever reused") {
  RankRunner k(0, 2, sec(1));
  auto e1 = k.start(CollCall{CollKind::AllReduce, 0, 64, 16}, ns(0));
  REQUIRE(e1.ok());
  CHECK(e1.value() == 1);
  CHECK(k.next_epoch() == 3);
  CHECK_FALSE(k.start(CollCall{CollKind::AllGather, 0, 64, 16}, ns(0)).ok());  // still running
}

TEST_CASE("calls that do not fit their kind are refused with the reason") {
  CHECK_THAT(build_program(CollCall{CollKind::AllReduce, 0, 64, 6}, 0, 2, 1).error().message(),
             Catch::Contains("multiple of 4"));
  CHECK_FALSE(build_program(CollCall{CollKind::AllGather, 0, 64, 0}, 0, 2, 1).ok());
  CHECK_FALSE(build_program(CollCall{CollKind::AllGather, 0, 64, 8}, 2, 2, 1).ok());
  CollCall d{CollKind::Dispatch, 0, 64, 0, {4, 4}, {0, 4}, {8, 4}, {0, 8}};
  CHECK_THAT(build_program(d, 0, 2, 1).error().message(), Catch::Contains("itself"));
  CHECK_THAT(build_program(CollCall{CollKind::AllGather, 0, 64, 8}, 0, 2, 0).error().message(),
             Catch::Contains("epoch 0"));
}

TEST_CASE("all-reduce parts cover the buffer exactly, 4-byte aligned") {
  for (std::uint32_t n = 1; n <= 5; ++n)
    for (std::uint64_t bytes : {4ULL, 8ULL, 20ULL, 1024ULL, 4100ULL}) {
      std::uint64_t next = 0;
      for (std::uint32_t r = 0; r < n; ++r) {
        const Part p = allreduce_part(bytes, r, n);
        CHECK(p.offset == next);
        CHECK(p.offset % 4 == 0);
        next += p.bytes;
      }
      CHECK(next == bytes);
    }
}
