#include "engine/failover/inflight_table.hpp"

#include <catch2/catch.hpp>
#include <vector>

using namespace railcheck;

namespace {

// A grouped request of `parts` receive WRs, appended in buffer order.
void append_request(InflightTable& t, std::uint64_t request, std::uint32_t parts) {
  for (std::uint32_t i = 0; i < parts; ++i) {
    InflightWr w;
    w.request = RequestId{request};
    w.part = i;
    w.wr.opcode = WrOpcode::Recv;
    t.append(std::move(w));
  }
}

void complete(InflightTable& t, std::size_t index, std::uint32_t bytes) {
  InflightWr& w = t.entries()[index];
  w.has_success_cqe = true;
  w.byte_len = bytes;
}

struct Finished {
  std::uint64_t request;
  std::vector<std::uint32_t> sizes;
  bool operator==(const Finished&) const = default;
};

std::vector<Finished> pop(InflightTable& t) {
  std::vector<Finished> out;
  t.pop_finished([&](RequestId r, std::span<const InflightWr> parts) {
    Finished f{r.value, {}};
    for (const InflightWr& p : parts) f.sizes.push_back(p.byte_len);
    out.push_back(f);
  });
  return out;
}

}  // namespace

TEST_CASE("pop_finished hands out whole requests in posting order with each part's size", "[inflight]") {
  InflightTable t;
  append_request(t, 1, 2);
  append_request(t, 2, 1);
  append_request(t, 3, 3);
  // Request 2 is complete, but request 1 before it is not: nothing finishes out of order.
  complete(t, 2, 64);
  complete(t, 0, 10);
  CHECK(pop(t).empty());
  CHECK(t.size() == 6);
  complete(t, 1, 20);
  CHECK(pop(t) == std::vector<Finished>{{1, {10, 20}}, {2, {64}}});
  REQUIRE(t.size() == 3);
  // A grouped receive finishes only with its last part, its sizes in buffer order.
  complete(t, 2, 3);
  complete(t, 0, 1);
  CHECK(pop(t).empty());
  complete(t, 1, 2);
  CHECK(pop(t) == std::vector<Finished>{{3, {1, 2, 3}}});
  CHECK(t.empty());
}

TEST_CASE("pop_finished waits for a part with a posting still outstanding", "[inflight]") {
  InflightTable t;
  append_request(t, 7, 1);
  InflightWr& w = t.entries()[0];
  t.mark_posted(w, WrId{5}, PathIndex{0}, Nanos{0});
  w.has_success_cqe = true;  // a part is done with its success CQE and no posting outstanding
  CHECK(pop(t).empty());
  t.mark_unposted(t.entries()[0]);
  CHECK(pop(t) == std::vector<Finished>{{7, {0}}});
}
