#include "backends/hw/verbs/pci_topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <system_error>

namespace railcheck::hw::verbs {

namespace fs = std::filesystem;

std::string_view to_string(PciDistance d) {
  switch (d) {
    case PciDistance::Pix: return "PIX";
    case PciDistance::Pxb: return "PXB";
    case PciDistance::Phb: return "PHB";
    case PciDistance::Node: return "NODE";
    case PciDistance::Sys: return "SYS";
  }
  return "?";
}

PciHops pci_distance(const PciFunction& a, const PciFunction& b) {
  if (a.chain.empty() || b.chain.empty() || a.chain.front() != b.chain.front()) {
    bool same_node = a.numa_node >= 0 && a.numa_node == b.numa_node;
    return {same_node ? PciDistance::Node : PciDistance::Sys, 0};
  }
  std::size_t common = 0;
  while (common < a.chain.size() && common < b.chain.size() && a.chain[common] == b.chain[common]) ++common;
  if (common == 1) return {PciDistance::Phb, 0};  // only the root complex is shared
  // Bridges on the way: each side's bridges below the shared one, plus the shared one.
  auto below = [common](const PciFunction& f) -> std::uint32_t {
    return f.chain.size() > common + 1 ? static_cast<std::uint32_t>(f.chain.size() - common - 1) : 0;
  };
  std::uint32_t bridges = below(a) + below(b) + 1;
  return {bridges <= 1 ? PciDistance::Pix : PciDistance::Pxb, bridges};
}

namespace {

std::optional<std::string> read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  if (!in || !std::getline(in, s)) return std::nullopt;
  return s;
}

std::uint64_t read_hex(const fs::path& p) {
  auto s = read_line(p);
  if (!s) return 0;
  try {
    return std::stoull(*s, nullptr, 16);
  } catch (...) {
    return 0;
  }
}

// The device's real folder, turned into the chain below "devices/": pci0000:00, bridges, device.
Result<PciFunction> describe(const fs::path& root, const fs::path& link, PciKind kind, std::string name) {
  std::error_code ec;
  fs::path real = fs::canonical(link, ec);
  if (ec) return Error{fmt::format("cannot resolve {}: {}", link.string(), ec.message()), "is the sysfs tree complete?"};
  fs::path devices = fs::canonical(root / "sys/devices", ec);
  if (ec) return Error{fmt::format("no {}: {}", (root / "sys/devices").string(), ec.message()), ""};
  fs::path rel = real.lexically_relative(devices);
  PciFunction f;
  f.kind = kind;
  for (const auto& part : rel) f.chain.push_back(part.string());
  if (f.chain.size() < 2 || f.chain.front().rfind("pci", 0) != 0)
    return Error{fmt::format("{} resolves to {}, which is not under a PCI root complex", link.string(), real.string()), ""};
  f.bdf = f.chain.back();
  f.name = name.empty() ? f.bdf : std::move(name);
  f.sysfs_path = "/sys/devices/" + rel.string();
  auto numa = read_line(real / "numa_node");
  f.numa_node = numa ? std::atoi(numa->c_str()) : -1;
  f.vendor = static_cast<std::uint16_t>(read_hex(real / "vendor"));
  f.pci_class = static_cast<std::uint32_t>(read_hex(real / "class"));
  return f;
}

constexpr std::uint16_t kVendorNvidia = 0x10de;
bool is_gpu_class(std::uint32_t cls) { return (cls >> 8) == 0x0302 || (cls >> 8) == 0x0300; }

}  // namespace

Result<PciTopology> read_pci_topology(const fs::path& root) {
  PciTopology t;
  std::error_code ec;
  fs::path ib = root / "sys/class/infiniband";
  if (fs::exists(ib, ec)) {
    for (const auto& e : fs::directory_iterator(ib, ec)) {
      auto f = describe(root, e.path() / "device", PciKind::Nic, e.path().filename().string());
      if (!f) return f.error();
      t.nics.push_back(std::move(f).value());
    }
  }
  fs::path pci = root / "sys/bus/pci/devices";
  if (fs::exists(pci, ec)) {
    for (const auto& e : fs::directory_iterator(pci, ec)) {
      if (read_hex(e.path() / "vendor") != kVendorNvidia || !is_gpu_class(static_cast<std::uint32_t>(read_hex(e.path() / "class"))))
        continue;
      auto f = describe(root, e.path(), PciKind::Gpu, "");
      if (!f) return f.error();
      t.gpus.push_back(std::move(f).value());
    }
  }
  if (ec) return Error{fmt::format("reading {}: {}", root.string(), ec.message()), ""};
  std::sort(t.nics.begin(), t.nics.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::sort(t.gpus.begin(), t.gpus.end(), [](const auto& a, const auto& b) { return a.bdf < b.bdf; });
  return t;
}

std::vector<NicChoice> choose_nics(const PciTopology& topo) {
  std::vector<NicChoice> out;
  if (topo.nics.empty()) return out;
  for (const auto& gpu : topo.gpus) {
    auto nearest = [&](auto&& allowed) -> const PciFunction* {
      const PciFunction* best = nullptr;
      PciHops best_hops;
      for (const auto& nic : topo.nics) {
        if (!allowed(nic)) continue;
        PciHops h = pci_distance(gpu, nic);
        if (!best || h < best_hops) {  // nics are in name order: ties keep the first name
          best = &nic;
          best_hops = h;
        }
      }
      return best;
    };
    const PciFunction* primary = nearest([](const PciFunction&) { return true; });
    NicChoice c;
    c.gpu = gpu.bdf;
    c.primary = primary->name;
    c.primary_hops = pci_distance(gpu, *primary);
    // "Behind the primary's switch": closer to the primary than through a host bridge.
    const PciFunction* standby = nearest([&](const PciFunction& n) {
      return n.name != primary->name && pci_distance(n, *primary).cls >= PciDistance::Phb;
    });
    if (!standby) {
      standby = nearest([&](const PciFunction& n) { return n.name != primary->name; });
      c.standby_shares_switch = standby != nullptr;
    }
    if (standby) {
      c.standby = standby->name;
      c.standby_hops = pci_distance(gpu, *standby);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace railcheck::hw::verbs
