// The bootstrap's frame codec (engine/bootstrap/bootstrap_codec.hpp): every message round
// trips, a stream split anywhere decodes the same, and malformed bytes are rejected by name.
#include "engine/bootstrap/bootstrap_codec.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace railcheck::bootstrap {
namespace {

using Catch::Matchers::Contains;
namespace wire = frame_wire;

std::vector<Frame> samples() {
  std::vector<std::uint8_t> blob(128);
  for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::uint8_t>(i * 7 + 3);
  return {
      Frame{0x0102030405060708ULL, CheckIn{3, 8, 128, "127.0.0.1:40001"}},
      Frame{1, RingNeighbour{4, 8, "127.0.0.1:40002"}},
      Frame{2, RingHello{3, 4}},
      Frame{3, RingBlock{5, 6, blob}},
      Frame{4, RingBlock{0, 0, {}}},
      Frame{5, Abort{kFromRoot, AbortReason::DuplicateRank, "rank 1 checked in twice"}},
      Frame{6, RingDone{7}},
  };
}

std::string rejection(const std::vector<std::uint8_t>& bytes) {
  auto r = decode_frame(bytes);
  if (r.ok()) return r.value() ? "<accepted>" : "<incomplete>";
  CHECK_FALSE(r.error().hint.empty());
  return r.error().what;
}

void put_u32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

TEST_CASE("bootstrap frames round trip through the codec", "[bootstrap][codec]") {
  for (const Frame& f : samples()) {
    const auto bytes = encode_frame(f);
    auto d = decode_frame(bytes);
    REQUIRE(d.ok());
    REQUIRE(d.value().has_value());
    CHECK(d.value()->frame == f);
    CHECK(d.value()->consumed == bytes.size());
  }
}

TEST_CASE("the header is little-endian with the RCBS magic at offset 0", "[bootstrap][codec]") {
  const auto b = encode_frame(Frame{0x1122334455667788ULL, RingHello{1, 2}});
  REQUIRE(b.size() == wire::kHeaderSize + 8);
  CHECK(std::string(b.begin(), b.begin() + 4) == "RCBS");
  CHECK(b[wire::kVersionOffset] == 1);
  CHECK(b[wire::kTypeOffset] == 3);
  CHECK(b[wire::kRunIdOffset] == 0x88);
  CHECK(b[wire::kRunIdOffset + 7] == 0x11);
  CHECK(b[wire::kLengthOffset] == 8);
  CHECK(b[wire::kHeaderSize] == 1);
  CHECK(b[wire::kHeaderSize + 4] == 2);
}

TEST_CASE("a stream of frames decodes the same however it is split", "[bootstrap][codec]") {
  std::vector<std::uint8_t> stream;
  for (const Frame& f : samples()) {
    const auto b = encode_frame(f);
    stream.insert(stream.end(), b.begin(), b.end());
  }
  for (std::size_t chunk : {1, 3, 19, 20, 21, 64, 4096}) {
    CAPTURE(chunk);
    std::vector<std::uint8_t> buffered;
    std::vector<Frame> got;
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      const auto end = std::min(stream.size(), at + chunk);
      buffered.insert(buffered.end(), stream.begin() + static_cast<std::ptrdiff_t>(at),
                      stream.begin() + static_cast<std::ptrdiff_t>(end));
      for (;;) {
        auto d = decode_frame(buffered);
        REQUIRE(d.ok());
        if (!d.value()) break;
        got.push_back(d.value()->frame);
        buffered.erase(buffered.begin(), buffered.begin() + static_cast<std::ptrdiff_t>(d.value()->consumed));
      }
    }
    CHECK(buffered.empty());
    CHECK(got == samples());
  }
}

TEST_CASE("malformed frames are rejected with the field that is wrong", "[bootstrap][codec]") {
  const auto good = encode_frame(Frame{7, CheckIn{1, 2, 128, "127.0.0.1:9"}});

  auto b = good;
  b[0] = 'X';
  CHECK_THAT(rejection(b), Contains("magic"));

  b = good;
  b[wire::kVersionOffset] = 2;
  CHECK_THAT(rejection(b), Contains("version 2"));

  b = good;
  b[wire::kTypeOffset] = 9;
  CHECK_THAT(rejection(b), Contains("unknown message type 9"));

  b = good;
  b[wire::kReservedOffset] = 1;
  CHECK_THAT(rejection(b), Contains("reserved"));

  b = good;
  put_u32(b, wire::kLengthOffset, 0x7fffffff);  // judged from the header alone
  CHECK_THAT(rejection(b), Contains("exceeds the largest message"));

  b = good;
  b.push_back(0);
  put_u32(b, wire::kLengthOffset, static_cast<std::uint32_t>(b.size() - wire::kHeaderSize));
  CHECK_THAT(rejection(b), Contains("1 trailing bytes"));

  b = good;
  b.pop_back();
  put_u32(b, wire::kLengthOffset, static_cast<std::uint32_t>(b.size() - wire::kHeaderSize));
  CHECK_THAT(rejection(b), Contains("payload ends inside ring address"));

  b = good;
  b[wire::kHeaderSize + 14] = 0x01;  // first address byte
  CHECK_THAT(rejection(b), Contains("non-printable"));

  auto abort = encode_frame(Frame{7, Abort{0, AbortReason::Timeout, "x"}});
  abort[wire::kHeaderSize + 4] = 42;
  CHECK_THAT(rejection(abort), Contains("unknown abort reason 42"));

  // A header cut short is not an error yet: more bytes may come.
  CHECK(rejection(std::vector<std::uint8_t>(good.begin(), good.begin() + 19)) == "<incomplete>");
  CHECK(rejection(std::vector<std::uint8_t>(good.begin(), good.end() - 1)) == "<incomplete>");
}

}  // namespace railcheck::bootstrap
