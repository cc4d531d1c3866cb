// The one-sided write API (fabric_connection.hpp): write_imm and its completions, the
// immediates that landed here, and what a peer needs to write into a region. Outside the
// engine: nothing here is replayed on failover.
#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include <iterator>

#include "backends/hw/libfabric/fabric_connection_state.hpp"

namespace railcheck {

bool FabricConnection::State::on_write_event(const RailCompletion& c) {
  // A remote write's immediate that consumed no posted receive carries no context of ours: the
  // common case at a target, told apart before any context lookup.
  if (c.context == nullptr) {
    if ((c.flags & FI_REMOTE_CQ_DATA) == 0 || c.error != 0) return false;
    landed_imms.push_back(static_cast<std::uint32_t>(c.data));
    return true;
  }
  if (WriteOp* w = writes.find(c.context)) {
    WriteCompletion& done = write_done.emplace_back();  // in place: no temporary to move and drop
    done.id = w->id;
    done.ok = c.error == 0;
    if (c.error != 0) done.error = fmt::format("{} ({})", fi_strerror(c.error), c.error_text);
    finish_write(w);
    return true;
  }
  if ((c.flags & FI_REMOTE_CQ_DATA) != 0 && c.error == 0 && ops.find(c.context) == nullptr) {
    landed_imms.push_back(static_cast<std::uint32_t>(c.data));
    return true;
  }
  return false;
}

Result<const RailMemory*> FabricConnection::State::rail_memory(MemoryRegion* mr, PathIndex path) {
  if (mr == nullptr || mrs.count(mr) == 0) return Error{"the memory region is not registered here", ""};
  // The common case first: registered on this rail, the rail not cut.
  if (path.value < mr->per_rail.size() && mr->per_rail[path.value] && !rails[path.value].cut)
    return &*mr->per_rail[path.value];
  if (path.value >= rails.size()) return Error{fmt::format("rail {} does not exist", path.value), ""};
  RailSlot& slot = rails[path.value];
  if (slot.cut) return Error{fmt::format("rail {} was cut", path.value), ""};
  if (mr->len == 0) return Error{"a zero-length memory region has no registration", ""};
  if (!mr->per_rail.at(path.value)) {
    auto reg = slot.rail->register_memory(mr->addr, mr->len);
    if (!reg) return reg.error();
    mr->per_rail[path.value] = std::move(reg).value();
  }
  return &*mr->per_rail[path.value];
}

Result<std::uint64_t> FabricConnection::write_imm(PathIndex rail, const void* data, std::size_t size, MemoryRegion* mr,
                                                  std::uint64_t remote_addr, std::uint64_t remote_key,
                                                  std::uint32_t imm) {
  auto mem = s_->rail_memory(mr, rail);
  if (!mem) return Error{"write_imm: " + mem.error().what, mem.error().hint};
  const auto* base = static_cast<const std::uint8_t*>(mr->addr);
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (size > 0 && (p < base || p + size > base + mr->len))
    return Error{fmt::format("write_imm: {} bytes at {} fall outside the {}-byte memory region", size, data, mr->len),
                 ""};
  RailSlot& slot = s_->rails[rail.value];
  if (slot.err || !slot.rail->has_peer())
    return Error{fmt::format("write_imm: rail {} has no usable peer yet", rail.value),
                 "wait for ready() (rail 0) or the standby's phase 2"};
  const std::uint64_t id = ++s_->next_write;
  WriteOp* raw = s_->writes.acquire();
  raw->fi = {};
  raw->id = id;
  raw->rail = rail.value;
  ++slot.stats.posted_writes;
  ++slot.writes_in_flight;
  FabricRail* r = slot.rail.get();
  void* desc = mem.value()->desc;
  State* st = s_.get();
  if (size == 0 && r->zero_length_write_injected()) {
    // No local completion comes for an inject: the write is complete once the provider took it.
    slot.pending.submit(
        [r, imm, remote_addr, remote_key, st, raw] {
          const ssize_t rc = r->inject_write(nullptr, 0, imm, remote_addr, remote_key);
          if (rc == 0) {
            st->write_done.push_back(WriteCompletion{raw->id, true, {}});
            st->finish_write(raw);
          }
          return rc;
        },
        [st, raw](ssize_t rc) {
          st->write_done.push_back(WriteCompletion{
              raw->id, false, fmt::format("fi_inject_writedata: {}", fi_strerror(static_cast<int>(-rc)))});
          st->finish_write(raw);
        });
    return id;
  }
  slot.pending.submit([st, data, size, desc, imm, remote_addr, remote_key, raw] {
                        RailSlot& s = st->rails[raw->rail];
                        const ssize_t rc = s.rail->write(data, size, desc, imm, remote_addr, remote_key, raw);
                        if (rc == 0) {
                          raw->posted = true;
                          ++s.writes_posted;
                        } else if (rc == -FI_EAGAIN) {
                          s.write_room = s.writes_posted;  // poll_rails retries once below it
                        }
                        return rc;
                      },
                      [st, raw](ssize_t rc) {
                        st->write_done.push_back(WriteCompletion{
                            raw->id, false, fmt::format("fi_writedata: {}", fi_strerror(static_cast<int>(-rc)))});
                        st->finish_write(raw);
                      });
  return id;
}

void FabricConnection::State::finish_write(WriteOp* w) {
  if (w->rail < rails.size() && rails[w->rail].writes_in_flight > 0) --rails[w->rail].writes_in_flight;
  if (w->posted && w->rail < rails.size() && rails[w->rail].writes_posted > 0) --rails[w->rail].writes_posted;
  w->posted = false;
  writes.release(w);
}

// Into an empty `out` the lists are swapped, not copied: no per-entry move, and both vectors
// keep their capacity, so a caller that clears its vector between calls allocates nothing.
void FabricConnection::completed_writes(std::vector<WriteCompletion>& out) {
  progress();
  if (out.empty()) {
    out.swap(s_->write_done);
  } else {
    out.insert(out.end(), std::make_move_iterator(s_->write_done.begin()),
               std::make_move_iterator(s_->write_done.end()));
  }
  s_->write_done.clear();
}

void FabricConnection::landed_imms(std::vector<std::uint32_t>& out) {
  progress();
  if (out.empty()) {
    out.swap(s_->landed_imms);
  } else {
    out.insert(out.end(), s_->landed_imms.begin(), s_->landed_imms.end());
  }
  s_->landed_imms.clear();
}

Result<std::uint64_t> FabricConnection::remote_key(MemoryRegion* mr, PathIndex rail) {
  auto mem = s_->rail_memory(mr, rail);
  if (!mem) return Error{"remote_key: " + mem.error().what, mem.error().hint};
  s_->rails[rail.value].writable_by_peer = true;
  return mem.value()->key;
}

Result<std::uint64_t> FabricConnection::remote_address(MemoryRegion* mr, PathIndex rail, std::size_t offset) {
  auto mem = s_->rail_memory(mr, rail);
  if (!mem) return Error{"remote_address: " + mem.error().what, mem.error().hint};
  if (offset > mr->len)
    return Error{fmt::format("remote_address: offset {} is past the {}-byte region", offset, mr->len), ""};
  return mem.value()->base + offset;
}

bool FabricConnection::rail_connected(PathIndex rail) const {
  if (rail.value >= s_->rails.size()) return false;
  const RailSlot& slot = s_->rails[rail.value];
  return !slot.cut && !slot.err && slot.rail->has_peer();
}

}  // namespace railcheck
