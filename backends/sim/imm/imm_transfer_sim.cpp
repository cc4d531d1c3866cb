#include "backends/sim/imm/imm_transfer_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <simgrid/s4u.hpp>

#include "backends/sim/routing/gpu_fabric.hpp"
#include "backends/sim/sim_platform.hpp"
#include "engine/core/rng.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

struct Landing {
  Nanos at{};
  std::uint32_t write = 0;  // posting order over the whole transfer
};

// One QP: rank 0's NIC `nic` to one receiver. Posts its writes in order, `window` at a time,
// and records when each one's last byte arrives.
void run_qp(const SimPlatform& platform, const std::vector<imm::WritePiece>& pieces,
            const std::vector<std::uint32_t>& mine, std::uint32_t window, double start, std::vector<Nanos>& done) {
  std::vector<sg4::CommPtr> active;
  std::vector<std::uint32_t> active_write;
  std::size_t next = 0;
  while (next < mine.size() || !active.empty()) {
    while (next < mine.size() && active.size() < window) {
      const imm::WritePiece& p = pieces[mine[next]];
      active.push_back(
          sg4::Comm::sendto_async(platform.nic_host(0, p.nic), platform.nic_host(1 + p.receiver, p.nic), p.length));
      active_write.push_back(mine[next++]);
    }
    const auto i = static_cast<std::size_t>(sg4::Comm::wait_any(active));
    done[active_write[i]] = from_seconds(sg4::Engine::get_clock() - start);
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
    active_write.erase(active_write.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// When each write becomes visible to the receiver's counter: RC holds a write back until every
// earlier write of its QP has landed; SRD adds the spraying delay and keeps no order.
std::vector<Landing> landings(const ImmTransferSpec& spec, const std::vector<imm::WritePiece>& pieces,
                              const std::vector<Nanos>& done, std::uint64_t seed) {
  SeededRng rng(seed);
  std::vector<Landing> out(pieces.size());
  std::vector<Nanos> qp_front(static_cast<std::size_t>(spec.nics_per_gpu) * spec.regions.dst_bytes.size());
  for (std::uint32_t w = 0; w < pieces.size(); ++w) {
    Nanos at = done[w];
    if (spec.transport == ImmTransport::Srd) {
      at += Nanos{static_cast<std::int64_t>(rng.unit() * static_cast<double>(spec.spray_skew.count()))};
    } else {
      Nanos& front = qp_front[static_cast<std::size_t>(pieces[w].receiver) * spec.nics_per_gpu + pieces[w].nic];
      at = front = std::max(front, at);
    }
    out[w] = {at, w};
  }
  std::sort(out.begin(), out.end(),
            [](const Landing& a, const Landing& b) { return std::pair(a.at, a.write) < std::pair(b.at, b.write); });
  return out;
}

}  // namespace

Result<ImmTransferResult> simulate_imm_transfer(const ImmTransferSpec& spec, std::uint64_t seed) {
  const imm::ShardRule rule{spec.shard_by, spec.nics_per_gpu, spec.nic.mtu, spec.pinned_nic, spec.max_write_bytes};
  auto sharded = shard_write(spec.shape, spec.regions, rule);
  if (!sharded) return sharded.error();
  if (spec.send_window == 0) return Error{"imm transfer: send window 0", "allow at least one write in flight"};
  const std::vector<imm::WritePiece>& pieces = sharded.value();
  const auto receivers = static_cast<std::uint32_t>(spec.regions.dst_bytes.size());

  std::vector<Nanos> done(pieces.size());
  {
    auto engine = make_routing_engine();
    Topology topo{1 + receivers, spec.nics_per_gpu, 1, spec.nic};
    SimPlatform platform(topo);
    // SimGrid's clock is process-global and keeps running from one engine to the next.
    const double start = sg4::Engine::get_clock();
    for (std::uint32_t nic = 0; nic < spec.nics_per_gpu; ++nic)
      for (std::uint32_t rx = 0; rx < receivers; ++rx) {
        std::vector<std::uint32_t> mine;
        for (std::uint32_t w = 0; w < pieces.size(); ++w)
          if (pieces[w].nic == nic && pieces[w].receiver == rx) mine.push_back(w);
        if (mine.empty()) continue;
        sg4::Actor::create(fmt::format("qp-nic{}-rx{}", nic, rx), platform.nic_host(0, nic),
                           [&platform, &pieces, mine, &spec, start, &done] {
                             run_qp(platform, pieces, mine, spec.send_window, start, done);
                           });
      }
    engine->run();
  }

  ImmTransferResult out;
  out.writes = static_cast<std::uint32_t>(pieces.size());
  out.completion.assign(receivers, Nanos{0});  // a receiver with no piece is done at once
  std::vector<imm::ImmCounter> counters(receivers);
  // Each receiver awaits its own immediate (its index); expect() cannot fail on a fresh counter
  // with n > 0. The landings are fed in time order after the run: the counter is pure.
  for (std::uint32_t rx = 0; rx < receivers; ++rx)
    if (const std::uint32_t n = imm::pieces_for(pieces, rx); n > 0) (void)counters[rx].expect(rx, n);
  std::vector<std::int64_t> last_posted(receivers, -1);
  for (const Landing& l : landings(spec, pieces, done, seed)) {
    const std::uint32_t rx = pieces[l.write].receiver;
    if (static_cast<std::int64_t>(l.write) < last_posted[rx]) ++out.out_of_order;
    last_posted[rx] = std::max<std::int64_t>(last_posted[rx], l.write);
    if (counters[rx].on_arrival(rx) == imm::ImmEvent::Completed) out.completion[rx] = l.at;
  }
  for (const auto& c : counters) {
    auto gaps = c.audit();
    out.shortfalls.insert(out.shortfalls.end(), gaps.begin(), gaps.end());
  }
  out.finished = *std::max_element(out.completion.begin(), out.completion.end());
  const double rate = spec.nic.link_gbps * 1e9 / 8.0 * spec.nics_per_gpu;
  out.ideal = from_seconds(static_cast<double>(imm::total_bytes(spec.shape)) / rate) + 2 * spec.nic.link_latency;
  return out;
}

Result<ImmTransferSpec> preset_transfer(std::string_view preset, imm::WriteShape shape, imm::Regions regions) {
  auto nic = find_nic_preset(preset);
  if (!nic) return Error{fmt::format("unknown NIC preset '{}'", preset), "use cx7-400g, efa-100g or efa-200g"};
  ImmTransferSpec spec;
  spec.nic = *nic;
  // A GPU gets 400 Gb/s from however many NICs of this kind it takes (seed, first entry).
  spec.nics_per_gpu = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(400 / nic->link_gbps));
  spec.transport = nic->ordered ? ImmTransport::Rc : ImmTransport::Srd;
  spec.shape = std::move(shape);
  spec.regions = std::move(regions);
  return spec;
}

}  // namespace railcheck::sim
