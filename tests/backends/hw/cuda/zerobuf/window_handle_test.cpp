// The window handle codec (what ranks exchange through the bootstrap to map each other's
// windows): round trip, a fixed little-endian layout, and every malformed blob rejected with an
// error that names the rank and the field.
#include "backends/hw/cuda/zerobuf/window_handle.hpp"

#include <catch2/catch.hpp>

using namespace railcheck::hw::zerobuf;

namespace {
WindowHandle sample(std::uint32_t rank = 1, std::uint32_t nranks = 2) {
  WindowHandle h;
  h.rank = rank;
  h.nranks = nranks;
  h.pid = 4242;
  h.fd = 17;
  h.window_bytes = 1540ULL << 20;
  h.flag_area_bytes = 128;
  for (std::size_t i = 0; i < h.device_uuid.size(); ++i) h.device_uuid[i] = static_cast<std::uint8_t>(0xA0 + i);
  return h;
}
}  // namespace

TEST_CASE("a window handle survives encode and decode, in 64 little-endian bytes", "[zerobuf][handle]") {
  const WindowHandle h = sample();
  const auto blob = encode(h);
  REQUIRE(blob.size() == kWindowHandleBytes);
  CHECK(blob[0] == 'Z');
  CHECK(blob[1] == 'B');
  CHECK(blob[2] == 'W');
  CHECK(blob[3] == '1');
  CHECK(blob[16] == (4242 & 0xff));  // pid, low byte first
  CHECK(blob[20] == 17);             // fd
  auto back = decode_window_handle(blob);
  REQUIRE(back.ok());
  CHECK(back.value() == h);
}

TEST_CASE("malformed window handles are rejected with what is wrong", "[zerobuf][handle]") {
  auto blob = encode(sample());
  SECTION("short") {
    blob.pop_back();
    auto r = decode_window_handle(blob);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what.find("63 bytes") != std::string::npos);
  }
  SECTION("wrong magic") {
    blob[0] = 'X';
    CHECK(decode_window_handle(blob).error().what.find("magic") != std::string::npos);
  }
  SECTION("newer version") {
    blob[4] = 2;
    CHECK(decode_window_handle(blob).error().what.find("version 2") != std::string::npos);
  }
  SECTION("reserved bytes set") {
    blob[60] = 1;
    CHECK(decode_window_handle(blob).error().what.find("reserved") != std::string::npos);
  }
  SECTION("rank beyond nranks") {
    blob[8] = 5;
    CHECK(decode_window_handle(blob).error().what.find("rank 5 of 2") != std::string::npos);
  }
  SECTION("too many ranks") {
    blob[12] = kMaxRanks + 1;
    CHECK(decode_window_handle(blob).error().what.find("nranks 9") != std::string::npos);
  }
  SECTION("no pid") {
    for (int i = 16; i < 20; ++i) blob[i] = 0;
    CHECK(decode_window_handle(blob).error().what.find("pid 0") != std::string::npos);
  }
  SECTION("a flag area larger than the window") {
    for (int i = 24; i < 32; ++i) blob[i] = 0;
    blob[24] = 64;
    CHECK(decode_window_handle(blob).error().what.find("flag area of 128 B in a window of 64 B") != std::string::npos);
  }
}

TEST_CASE("the gathered handles must be one per rank, in rank order, agreeing on the layout", "[zerobuf][handle]") {
  std::vector<std::vector<std::uint8_t>> blobs = {encode(sample(0)), encode(sample(1))};
  auto ok = decode_peer_handles(blobs, 0);
  REQUIRE(ok.ok());
  CHECK(ok->size() == 2);
  CHECK(ok.value()[1].pid == 4242);

  std::swap(blobs[0], blobs[1]);
  auto swapped = decode_peer_handles(blobs, 0);
  REQUIRE_FALSE(swapped.ok());
  CHECK(swapped.error().what.find("blob 0 says it is rank 1") != std::string::npos);

  WindowHandle other = sample(1);
  other.flag_area_bytes = 256;
  auto mixed = decode_peer_handles({encode(sample(0)), encode(other)}, 0);
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.error().what.find("rank 1 has a flag area of 256 B") != std::string::npos);

  auto three = decode_peer_handles({encode(sample(0)), encode(sample(1)), encode(sample(2, 3))}, 0);
  REQUIRE_FALSE(three.ok());
  CHECK(three.error().what.find("rank 0 says 2 ranks, the bootstrap gathered 3") != std::string::npos);

  auto garbage = decode_peer_handles({encode(sample(0)), std::vector<std::uint8_t>(64, 0)}, 0);
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().what.find("bootstrap blob of rank 1") != std::string::npos);
}
