// Matchers of NCCL INFO lines (nccl_log_lines.hpp).
#include "engine/plan/nccl_log_lines.hpp"

#include <cctype>
#include <cstddef>

#include "engine/core/ascii.hpp"

namespace railcheck::plan {
namespace {

// A cursor over one line; every take_* consumes on success only.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;

  bool done() const { return i >= s.size(); }
  bool lit(std::string_view w) {
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
  std::size_t skip_spaces() {
    const std::size_t from = i;
    while (i < s.size() && is_ascii_blank(s[i])) ++i;
    return i - from;
  }
  template <typename Pred>
  std::optional<std::string_view> take(Pred pred) {
    std::size_t j = i;
    while (j < s.size() && pred(s[j])) ++j;
    if (j == i) return std::nullopt;
    const auto out = s.substr(i, j - i);
    i = j;
    return out;
  }
  std::optional<std::string_view> digits() { return take(is_ascii_digit); }
  std::optional<std::string_view> signed_digits() {
    const std::size_t from = i;
    const bool minus = lit("-");
    if (!digits()) {
      i = from;
      return std::nullopt;
    }
    (void)minus;
    return s.substr(from, i - from);
  }
  std::optional<std::string_view> non_space() {
    return take([](char c) { return !is_ascii_blank(c); });
  }
};

}  // namespace

std::optional<Prefixed> match_prefix(std::string_view line) {
  Cursor c{line};
  c.skip_spaces();
  const std::size_t start = c.i;
  if (c.lit("NCCL INFO ")) return Prefixed{"", line.substr(c.i)};
  c.i = start;
  const auto host = c.take([](char ch) { return !is_ascii_blank(ch) && ch != ':'; });
  if (!host || !c.lit(":")) return std::nullopt;
  const auto pid = c.digits();
  if (!pid || !c.lit(":") || !c.digits() || c.skip_spaces() == 0 || !c.lit("[") || !c.digits() || !c.lit("]") ||
      c.skip_spaces() == 0 || !c.lit("NCCL INFO "))
    return std::nullopt;
  return Prefixed{std::string(*host) + ":" + std::string(*pid), line.substr(c.i)};
}

std::optional<std::string_view> match_ring_channels(std::string_view body) {
  constexpr std::string_view kChannel = "Channel ";
  if (!body.starts_with(kChannel) || body.find("->") != std::string_view::npos) return std::nullopt;
  const std::size_t slash = body.find('/');
  const std::size_t colon = body.find(" : ");
  if (slash == std::string_view::npos || colon == std::string_view::npos || colon < slash) return std::nullopt;
  return body.substr(slash + 1, colon - slash - 1);
}

std::optional<InitLine> match_init(std::string_view body) {
  const std::size_t complete = body.rfind("Init COMPLETE");
  if (complete == std::string_view::npos) return std::nullopt;
  for (std::size_t at = body.find("comm 0x"); at != std::string_view::npos && at < complete;
       at = body.find("comm 0x", at + 1)) {
    Cursor c{body.substr(0, complete), at + 5};
    const std::size_t hex_from = c.i;
    c.lit("0x");
    const auto hex = c.take([](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)) != 0; });
    if (!hex) continue;
    const std::string comm(body.substr(hex_from, c.i - hex_from));
    if (!c.lit(" rank ")) continue;
    const auto rank = c.digits();
    if (!rank || !c.lit(" nranks ")) continue;
    const auto nranks = c.digits();
    if (!nranks || !c.lit(" ")) continue;
    return InitLine{comm, *rank, *nranks};
  }
  return std::nullopt;
}

std::optional<OpFields> match_op(std::string_view body) {
  Cursor c{body};
  OpFields f;
  const auto letters = [](char ch) { return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z'); };
  const auto opcount = [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)) != 0 || ch == 'x'; };
  auto op = c.take(letters);
  if (!op || !c.lit(": opCount ")) return std::nullopt;
  auto oc = c.take(opcount);
  if (!oc || !c.lit(" sendbuff ") || !c.non_space() || !c.lit(" recvbuff ") || !c.non_space() || !c.lit(" count "))
    return std::nullopt;
  auto count = c.digits();
  if (!count || !c.lit(" datatype ")) return std::nullopt;
  auto dt = c.signed_digits();
  if (!dt || !c.lit(" op ")) return std::nullopt;
  auto ro = c.signed_digits();
  if (!ro || !c.lit(" root ")) return std::nullopt;
  auto root = c.signed_digits();
  if (!root || !c.lit(" comm ")) return std::nullopt;
  auto comm = c.non_space();
  if (!comm || !c.lit(" [nranks=")) return std::nullopt;
  auto nr = c.digits();
  if (!nr || !c.lit("] stream ") || !c.non_space()) return std::nullopt;
  c.skip_spaces();
  if (!c.done()) return std::nullopt;
  f.op = *op;
  f.op_count = *oc;
  f.count = *count;
  f.datatype = *dt;
  f.redop = *ro;
  f.root = *root;
  f.comm = *comm;
  f.nranks = *nr;
  return f;
}

}  // namespace railcheck::plan
