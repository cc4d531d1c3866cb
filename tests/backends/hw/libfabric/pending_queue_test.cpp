#include "backends/hw/libfabric/pending_queue.hpp"

#include <catch2/catch.hpp>
#include <vector>

using railcheck::fabric::PendingQueue;

namespace {

// A provider whose queue takes `room` posts until told otherwise, recording what it took.
struct FakeProvider {
  int room = 0;
  std::vector<int> taken;
  ssize_t post(int id) {
    if (room == 0) return -FI_EAGAIN;
    --room;
    taken.push_back(id);
    return 0;
  }
};

}  // namespace

TEST_CASE("posts the provider refused with EAGAIN go out later in the order they were made", "[fabric]") {
  FakeProvider p;
  PendingQueue q;
  std::vector<int> failed;
  p.room = 1;
  // Eight words of capture, as a waiting write's attempt has: held inline.
  std::uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;  // not const: clang would not capture constants
  for (int id = 0; id < 5; ++id) {
    const bool at_once =
        q.submit([&p, id, a, b, c, d, e, f] { return p.post(id + static_cast<int>(a + b + c + d + e + f - 21)); },
                 [&failed, id](ssize_t) { failed.push_back(id); });
    CHECK(at_once == (id == 0));
  }
  CHECK(q.size() == 4);
  CHECK(q.deferred() == 1);  // the first refused post; later ones queue behind it untried
  p.room = 2;
  CHECK(q.retry() == 2);
  p.room = 10;
  q.submit([&p] { return p.post(5); }, [&failed](ssize_t) { failed.push_back(5); });  // behind the two waiting
  CHECK(q.retry() == 0);
  CHECK(q.empty());
  CHECK(p.taken == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(failed.empty());
}

TEST_CASE("a waiting post that fails for good reports its error and the queue moves on", "[fabric]") {
  PendingQueue q;
  std::vector<int> failed, taken;
  bool full = true;
  REQUIRE_FALSE(q.submit(
      [&] {
        if (full) return ssize_t{-FI_EAGAIN};
        taken.push_back(0);
        return ssize_t{0};
      },
      [&failed](ssize_t) { failed.push_back(0); }));
  q.submit([] { return ssize_t{-FI_EIO}; }, [&failed](ssize_t rc) { failed.push_back(static_cast<int>(rc)); });
  q.submit(
      [&taken] {
        taken.push_back(2);
        return ssize_t{0};
      },
      [&failed](ssize_t) { failed.push_back(2); });
  CHECK(q.retry() == 3);  // the front still says EAGAIN: nothing behind it is tried
  CHECK(taken.empty());
  full = false;
  CHECK(q.retry() == 0);
  CHECK(taken == std::vector<int>{0, 2});
  CHECK(failed == std::vector<int>{-FI_EIO});
  // With nothing waiting, a refusal other than EAGAIN is reported at once.
  CHECK_FALSE(q.submit([] { return ssize_t{-FI_EIO}; }, [&failed](ssize_t) { failed.push_back(9); }));
  CHECK(failed == std::vector<int>{-FI_EIO, 9});
}

// The queue is a ring that doubles when full: posts keep their order across the wrap and across
// a growth that happens while the waiting posts straddle the end of the ring; and an error
// callback that submits again (as a flush does) lands behind what still waits.
TEST_CASE("waiting posts keep their order across the ring's wrap and growth", "[fabric]") {
  FakeProvider p;
  PendingQueue q;
  std::vector<int> failed;
  int next = 0;
  auto submit = [&] {
    const int id = next++;
    q.submit([&p, id] { return p.post(id); }, [&failed, id](ssize_t) { failed.push_back(id); });
  };
  for (int round = 0; round < 50; ++round) {
    for (int k = 0; k < 7; ++k) submit();  // more go in than out: the head walks round the ring
    p.room = 5;
    q.retry();
    CHECK(p.room == 0);
  }
  p.room = 1 << 20;
  CHECK(q.retry() == 0);
  REQUIRE(p.taken.size() == static_cast<std::size_t>(next));
  for (int i = 0; i < next; ++i) CHECK(p.taken[static_cast<std::size_t>(i)] == i);
  CHECK(failed.empty());
  // An error callback that submits while the ring is full of waiting posts.
  PendingQueue r;
  std::vector<int> order;
  bool refuse = true;
  r.submit([&] { return refuse ? ssize_t{-FI_EAGAIN} : ssize_t{-FI_EIO}; },
           [&](ssize_t) {
             order.push_back(-1);
             r.submit([&order] { order.push_back(100); return ssize_t{0}; }, [](ssize_t) {});
           });
  for (int i = 0; i < 40; ++i)
    r.submit([&order, &refuse, i] { return refuse ? ssize_t{-FI_EAGAIN} : (order.push_back(i), ssize_t{0}); },
             [](ssize_t) {});
  refuse = false;
  CHECK(r.retry() == 0);
  REQUIRE(order.size() == 42);
  CHECK(order.front() == -1);
  CHECK(order.back() == 100);
  for (int i = 0; i < 40; ++i) CHECK(order[static_cast<std::size_t>(i) + 1] == i);
}
