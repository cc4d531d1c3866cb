#include "verify/choice.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <sstream>
#include <utility>
#include <vector>

namespace railcheck::verify {
namespace {

using Kind = Choice::Kind;

constexpr std::array<std::pair<Kind, std::string_view>, 13> kKinds = {{
    {Kind::Data, "data"},
    {Kind::Ack, "ack"},
    {Kind::RecvCqe, "cqe"},
    {Kind::Control, "ctrl"},
    {Kind::Timer, "timer"},
    {Kind::KillLink, "kill"},
    {Kind::RepairLink, "repair"},
    {Kind::LoseData, "lose-data"},
    {Kind::LoseAck, "lose-ack"},
    {Kind::LoseControl, "lose-ctrl"},
    {Kind::Retransmit, "retransmit"},
    {Kind::Isend, "isend"},
    {Kind::Irecv, "irecv"},
}};

// Which fields a kind carries, in text order.
struct Fields {
  bool conn, path, to, index;
};
Fields fields_of(Kind k) {
  switch (k) {
    case Kind::Data: return {true, true, false, true};
    case Kind::Ack:
    case Kind::RecvCqe:
    case Kind::LoseData:
    case Kind::LoseAck:
    case Kind::Retransmit: return {true, true, false, false};
    case Kind::Control:
    case Kind::LoseControl: return {true, true, true, false};
    case Kind::KillLink:
    case Kind::RepairLink: return {false, true, false, false};
    case Kind::Isend:
    case Kind::Irecv: return {true, false, false, false};
    case Kind::Timer: return {false, false, false, false};
  }
  return {false, false, false, false};
}

std::optional<std::uint8_t> field(std::string_view token, char prefix) {
  if (token.size() < 2 || token[0] != prefix) return std::nullopt;
  unsigned v = 0;
  const auto* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data() + 1, end, v);
  if (ec != std::errc{} || ptr != end || v > 255) return std::nullopt;
  return static_cast<std::uint8_t>(v);
}

}  // namespace

std::string to_string(const Choice& c) {
  std::string out;
  for (const auto& [k, name] : kKinds)
    if (k == c.kind) out = std::string(name);
  const Fields f = fields_of(c.kind);
  if (f.conn) out += fmt::format(" c{}", c.conn);
  if (f.path) out += fmt::format(" p{}", c.path);
  if (f.to) out += fmt::format(" t{}", c.to);
  if (f.index && c.index != 0) out += fmt::format(" i{}", c.index);
  return out;
}

std::optional<Choice> parse_choice(std::string_view text) {
  std::vector<std::string> tokens;
  std::istringstream in{std::string(text)};
  for (std::string t; in >> t;) tokens.push_back(t);
  if (tokens.empty()) return std::nullopt;
  Choice c;
  bool known = false;
  for (const auto& [k, name] : kKinds)
    if (name == tokens[0]) {
      c.kind = k;
      known = true;
    }
  if (!known) return std::nullopt;
  const Fields f = fields_of(c.kind);
  std::size_t i = 1;
  auto take = [&](bool wanted, char prefix, std::uint8_t& into, bool optional) {
    if (!wanted) return true;
    if (i < tokens.size()) {
      if (auto v = field(tokens[i], prefix)) {
        into = *v;
        ++i;
        return true;
      }
    }
    return optional;
  };
  if (!take(f.conn, 'c', c.conn, false) || !take(f.path, 'p', c.path, false) || !take(f.to, 't', c.to, false) ||
      !take(f.index, 'i', c.index, true))
    return std::nullopt;
  if (i != tokens.size()) return std::nullopt;
  return c;
}

}  // namespace railcheck::verify
