#pragma once
// A verifiable message stream over one FabricConnection per side: message i's length and bytes
// are a function of (seed, i), its first 8 bytes name i, and its NCCL tag is tag_of(i). The
// receiver posts grouped receives (1..max_group buffers, cycling) and checks that every buffer
// got exactly the message whose tag it was posted with: a lost, duplicated, reordered or
// corrupted message fails with a line that says which. Used by the tests and by
// `railcheck conform`.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/libfabric/fabric_connection.hpp"

namespace railcheck::conform {

struct StreamSpec {
  std::uint64_t seed = 1;
  std::uint64_t messages = 200;
  std::size_t max_size = 4096;  // sizes drawn in [0, max_size] unless fixed_size is set
  std::optional<std::size_t> fixed_size;
  std::uint32_t window = 16;                       // requests outstanding per side
  std::uint32_t max_group = 4;                     // grouped receive sizes cycle 1..max_group
  // Sender: fail the primary after this many sends, by the StreamSender's cut action
  // (cut_rail(0) unless it was given another, such as taking rail 0's link down).
  std::optional<std::uint64_t> cut_primary_after;
};

std::uint64_t tag_of(std::uint64_t i);
std::size_t size_of(const StreamSpec& s, std::uint64_t i);
void fill_message(std::uint64_t seed, std::uint64_t i, std::uint8_t* p, std::size_t n);
// Empty when the buffer holds message i (of `n` bytes, `got` received) exactly.
std::string check_message(std::uint64_t seed, std::uint64_t i, const std::uint8_t* p, std::size_t n, std::size_t got);

class StreamSender {
 public:
  // `cut`: how the primary fails at spec.cut_primary_after; empty = c.cut_rail(0). It returns
  // an error text, or empty when the fault was injected.
  using CutAction = std::function<std::string()>;
  StreamSender(FabricConnection& c, StreamSpec spec, CutAction cut = {});
  // Posts and tests; returns false once the stream failed (error() says why).
  bool step();
  bool done() const { return completed_ == spec_.messages; }
  const std::string& error() const { return error_; }
  std::uint64_t completed() const { return completed_; }

 private:
  struct Slot {
    RequestId id;
    std::vector<std::uint8_t> buf;
    MemoryRegion* mr = nullptr;
  };
  FabricConnection& c_;
  StreamSpec spec_;
  CutAction cut_;
  std::deque<Slot> inflight_;
  std::uint64_t next_ = 0;
  std::uint64_t completed_ = 0;
  bool cut_done_ = false;
  std::string error_;
};

class StreamReceiver {
 public:
  StreamReceiver(FabricConnection& c, StreamSpec spec);
  bool step();
  bool done() const { return verified_ == spec_.messages; }
  const std::string& error() const { return error_; }
  std::uint64_t verified() const { return verified_; }

 private:
  struct Group {
    RequestId id;
    std::uint64_t first = 0;  // message index of buffer 0
    std::vector<std::vector<std::uint8_t>> bufs;
    std::vector<MemoryRegion*> mrs;
  };
  FabricConnection& c_;
  StreamSpec spec_;
  std::deque<Group> inflight_;
  std::uint64_t next_ = 0;
  std::uint64_t verified_ = 0;
  std::uint32_t group_turn_ = 0;
  std::string error_;
};

}  // namespace railcheck::conform
