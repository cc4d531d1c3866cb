#pragma once
// The one-sided conformance cases (issue 7 item 4): WRITE_IMM with ImmCounter under the
// transport's real completion order, zero-length writes, and one buffer sharded across both
// rails. The initiator writes a plan derived from (kind, seed) into the target's registered
// buffer with FabricConnection::write_imm; the target counts landed immediates with
// engine/imm/imm_counter.hpp, and at the end checks every expectation completed exactly once,
// no over-arrival, and the buffer's bytes. Used by the tests and by `railcheck conform`.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/libfabric/fabric_connection.hpp"
#include "engine/imm/imm_counter.hpp"

namespace railcheck::conform {

enum class WriteCaseKind : std::uint8_t {
  Counted,     // writes of varied sizes, several per immediate, on rail 0
  ZeroLength,  // writes of 0 bytes: only the immediate travels
  Sharded,     // one transfer split over both rails by engine/imm/nic_sharding.hpp, one immediate
};
const char* to_string(WriteCaseKind k);
std::optional<WriteCaseKind> write_case_kind(const std::string& name);

struct WriteCaseSpec {
  WriteCaseKind kind = WriteCaseKind::Counted;
  std::uint64_t seed = 1;
  std::uint32_t writes = 64;  // Counted / ZeroLength; Sharded: the transfer is writes x 16 KiB + 777 B
};

struct PlannedWrite {
  std::uint32_t rail = 0;
  std::uint64_t offset = 0;  // same offset in the initiator's source and the target's buffer
  std::uint64_t length = 0;
  std::uint32_t imm = 0;
};

struct WritePlan {
  std::size_t buffer_bytes = 0;
  std::vector<PlannedWrite> writes;
  std::map<std::uint32_t, std::uint32_t> expected;  // imm -> how many writes carry it
};

Result<WritePlan> plan_writes(const WriteCaseSpec& spec);
std::uint8_t pattern_byte(std::uint64_t seed, std::uint64_t offset);

// Where the target's buffer is, per rail: what the initiator writes with.
struct WriteTarget {
  std::vector<std::uint64_t> addr;
  std::vector<std::uint64_t> key;
};
std::string encode_target(const WriteTarget& t);
std::optional<WriteTarget> decode_target(const std::string& text);

class WriteInitiator {
 public:
  WriteInitiator(FabricConnection& c, WriteCaseSpec spec, WriteTarget target);
  ~WriteInitiator();
  WriteInitiator(const WriteInitiator&) = delete;
  WriteInitiator& operator=(const WriteInitiator&) = delete;
  // Waits for the rails the plan uses, posts every write, collects completions.
  bool step();
  bool done() const { return error_.empty() && posted_ == plan_.writes.size() && completed_ == posted_; }
  const std::string& error() const { return error_; }

 private:
  FabricConnection& c_;
  WriteCaseSpec spec_;
  WriteTarget target_;
  WritePlan plan_;
  std::vector<std::uint8_t> src_;
  MemoryRegion* mr_ = nullptr;
  std::size_t posted_ = 0;
  std::size_t completed_ = 0;
  std::vector<WriteCompletion> batch_;
  std::string error_;
};

class WriteReceiver {
 public:
  WriteReceiver(FabricConnection& c, WriteCaseSpec spec);
  ~WriteReceiver();
  WriteReceiver(const WriteReceiver&) = delete;
  WriteReceiver& operator=(const WriteReceiver&) = delete;
  // Registers the buffer on every rail; call once before handing the target to the peer.
  Result<WriteTarget> target();
  // Counts what landed; done() once every expectation completed.
  bool step();
  bool done() const { return error_.empty() && completions_ == plan_.expected.size(); }
  // After the initiator finished: drains once more, then the exactly-once and data checks.
  // Empty when everything holds.
  std::string verify();
  const std::string& error() const { return error_; }
  std::uint64_t landed() const { return landed_; }

 private:
  FabricConnection& c_;
  WriteCaseSpec spec_;
  WritePlan plan_;
  std::vector<std::uint8_t> dst_;
  MemoryRegion* mr_ = nullptr;
  imm::ImmCounter counter_;
  std::map<std::uint32_t, std::uint32_t> completed_by_imm_;
  std::size_t completions_ = 0;
  std::uint64_t landed_ = 0;
  std::vector<std::uint32_t> batch_;
  std::string error_;
};

}  // namespace railcheck::conform
