#include "models/toml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <unistd.h>
#include <fstream>
#include <sstream>

namespace railcheck {
namespace {

constexpr std::string_view kDocsHint = "see docs/scenarios.md for every key, its default and its range";

std::int64_t line_of(const toml::source_region& s) { return s.begin.line > 0 ? s.begin.line : 1; }

// Edit distance, to suggest the key a typo was meant to be.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest_key_hint(std::string_view key, std::span<const std::string_view> allowed) {
  std::string_view best;
  std::size_t best_d = key.size() / 3 + 1;  // further than this is not a typo
  for (auto a : allowed) {
    const std::size_t d = edit_distance(key, a);
    if (d < best_d || (d == best_d && best.empty())) {
      best = a;
      best_d = d;
    }
  }
  return best.empty() ? std::string() : fmt::format("did you mean \"{}\"?", best);
}

// "4096", "64KiB", "4 MiB", "1GiB". Binary units only: "4MB" is ambiguous, so it is an error.
std::optional<std::uint64_t> parse_byte_size(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end == s.data()) return std::nullopt;
  std::string_view unit(end, static_cast<std::size_t>(s.data() + s.size() - end));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  if (unit == "KiB") shift = 10;
  if (unit == "MiB") shift = 20;
  if (unit == "GiB") shift = 30;
  if (shift < 0 || v > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return v << shift;
}

std::string format_bound(double v) { return fmt::format("{}", v); }

}  // namespace

void TomlReader::fail(std::int64_t line, std::string_view key, std::string_view expected, std::string_view got,
                      std::string_view hint) {
  if (error_) return;
  error_ = Error{fmt::format("{}:{}: {}: expected {}, got {}", file_, line, key, expected, got),
                 std::string(hint.empty() ? kDocsHint : hint)};
}

std::string describe_value(const toml::node& n) {
  if (auto s = n.value_exact<std::string>()) {
    if (s->size() > 40) return fmt::format("\"{}...\"", s->substr(0, 40));
    return fmt::format("\"{}\"", *s);
  }
  if (auto i = n.value_exact<std::int64_t>()) return fmt::format("{}", *i);
  if (auto d = n.value_exact<double>()) return fmt::format("{}", *d);
  if (auto b = n.value_exact<bool>()) return *b ? "true" : "false";
  if (n.is_table()) return "a table";
  if (n.is_array()) return "an array";
  if (n.is_date()) return "a date";
  if (n.is_time()) return "a time";
  return "a date-time";
}

std::string describe_bounds(Bounds b, bool integer) {
  const std::string_view kind = integer ? "integer" : "number";
  if (std::isinf(b.hi)) {
    if (integer && b.lo == 1) return "a positive integer";
    if (b.lo == 0) return fmt::format("a non-negative {}", kind);
    return fmt::format("{} {} >= {}", integer ? "an" : "a", kind, format_bound(b.lo));
  }
  return fmt::format("{} {} in [{}, {}]", integer ? "an" : "a", kind, format_bound(b.lo), format_bound(b.hi));
}

TomlTable::TomlTable(TomlReader& reader, const toml::table* table, std::string path)
    : reader_(&reader), table_(table), path_(std::move(path)) {}

std::string TomlTable::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

std::int64_t TomlTable::line() const { return table_ != nullptr ? line_of(table_->source()) : 1; }

const toml::node* TomlTable::node(std::string_view key) const { return table_ != nullptr ? table_->get(key) : nullptr; }

void TomlTable::fail(std::string_view key, std::string_view expected, std::string_view got, std::string_view hint) {
  const toml::node* n = node(key);
  reader_->fail(n != nullptr ? line_of(n->source()) : line(), key_path(key), expected, got, hint);
}

void TomlTable::fail_at(const toml::node& n, std::string_view key, std::string_view expected, std::string_view got,
                        std::string_view hint) {
  reader_->fail(line_of(n.source()), key_path(key), expected, got, hint);
}

void TomlTable::fail_here(std::string_view expected, std::string_view got, std::string_view hint) {
  reader_->fail(line(), path_, expected, got, hint);
}

void TomlTable::allow_only(std::span<const std::string_view> allowed) {
  if (table_ == nullptr) return;
  for (const auto& [k, v] : *table_) {
    if (std::find(allowed.begin(), allowed.end(), k.str()) != allowed.end()) continue;
    std::string list;
    for (auto a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
    reader_->fail(line_of(k.source()), key_path(k.str()), fmt::format("one of {}", list), "an unknown key",
                  nearest_key_hint(k.str(), allowed));
  }
}

void TomlTable::require(std::initializer_list<std::string_view> keys) {
  if (table_ == nullptr) return;
  for (auto k : keys)
    if (node(k) == nullptr) fail(k, "a value (this key is required)", "nothing");
}

TomlTable TomlTable::table(std::string_view key) {
  const toml::node* n = node(key);
  if (n != nullptr && !n->is_table()) fail(key, fmt::format("a table ([{}])", key_path(key)), describe_value(*n));
  return TomlTable(*reader_, n != nullptr ? n->as_table() : nullptr, key_path(key));
}

std::vector<TomlTable> TomlTable::table_array(std::string_view key) {
  std::vector<TomlTable> out;
  const toml::node* n = node(key);
  if (n == nullptr) return out;
  const std::string expected = fmt::format("an array of tables ([[{}]])", key_path(key));
  const toml::array* arr = n->as_array();
  if (arr == nullptr) {
    fail(key, expected, describe_value(*n));
    return out;
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& e = *arr->get(i);
    const std::string item = fmt::format("{}[{}]", key, i);
    if (!e.is_table()) {
      fail_at(e, item, expected, describe_value(e));
      continue;
    }
    out.emplace_back(*reader_, e.as_table(), key_path(item));
  }
  return out;
}

std::optional<std::string> TomlTable::text(std::string_view key) {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  if (auto s = n->value_exact<std::string>()) return *s;
  fail(key, "a string", describe_value(*n));
  return std::nullopt;
}

std::optional<double> TomlTable::number(std::string_view key, Bounds b) {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  std::optional<double> v;
  if (auto i = n->value_exact<std::int64_t>()) v = static_cast<double>(*i);  // 5 where 5.0 is meant is fine
  if (auto d = n->value_exact<double>()) v = *d;
  // Also rejects nan, and inf even where the range is open above: a finite number is meant.
  if (!v || !std::isfinite(*v) || !(*v >= b.lo && *v <= b.hi)) {
    fail(key, describe_bounds(b, false), describe_value(*n));
    return std::nullopt;
  }
  return v;
}

std::optional<double> TomlTable::numeric(std::string_view key, std::string_view expected, bool accept_bool) {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  if (auto i = n->value_exact<std::int64_t>()) return static_cast<double>(*i);
  if (auto d = n->value_exact<double>(); d && std::isfinite(*d)) return *d;  // never nan or inf
  if (auto b = n->value_exact<bool>(); b && accept_bool) return *b ? 1.0 : 0.0;
  fail(key, expected, describe_value(*n));
  return std::nullopt;
}

std::optional<std::uint64_t> TomlTable::whole_value(const toml::node& n, std::string_view key, Bounds b,
                                                    double type_max) {
  std::optional<double> v;
  if (auto i = n.value_exact<std::int64_t>()) v = static_cast<double>(*i);
  if (auto d = n.value_exact<double>(); d && std::floor(*d) == *d && std::abs(*d) < 0x1p53) v = *d;
  if (!v || !(*v >= b.lo && *v <= b.hi)) {
    fail_at(n, key, describe_bounds(b, true), describe_value(n));
    return std::nullopt;
  }
  if (*v > type_max) {
    fail_at(n, key, describe_bounds({b.lo, type_max}, true), describe_value(n));
    return std::nullopt;
  }
  // Exact for every integer TOML can hold: read the int64 itself rather than the double.
  if (auto i = n.value_exact<std::int64_t>()) return static_cast<std::uint64_t>(*i);
  return static_cast<std::uint64_t>(*v);
}

std::optional<std::uint64_t> TomlTable::whole_within(std::string_view key, Bounds b, double type_max) {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  return whole_value(*n, key, b, type_max);
}

std::vector<std::uint64_t> TomlTable::whole_array(std::string_view key, Bounds each) {
  std::vector<std::uint64_t> out;
  const toml::node* n = node(key);
  if (n == nullptr) return out;
  const toml::array* arr = n->as_array();
  if (arr == nullptr) {
    fail(key, "an array of integers", describe_value(*n));
    return out;
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    auto v = whole_value(*arr->get(i), fmt::format("{}[{}]", key, i), each, 0x1p63);
    if (v) out.push_back(*v);
  }
  return out;
}

// A duration must fit Nanos (int64 ns, about 292 years) with room to add others to it.
constexpr double kMaxDurationNs = 0x1p62;

std::optional<Nanos> TomlTable::millis(std::string_view key, Bounds b) {
  b.hi = std::min(b.hi, kMaxDurationNs / 1e6);
  auto v = number(key, b);
  if (!v) return std::nullopt;
  return Nanos{std::llround(*v * 1e6)};
}

std::optional<Nanos> TomlTable::micros(std::string_view key, Bounds b) {
  b.hi = std::min(b.hi, kMaxDurationNs / 1e3);
  auto v = number(key, b);
  if (!v) return std::nullopt;
  return Nanos{std::llround(*v * 1e3)};
}

std::optional<std::uint64_t> TomlTable::byte_size(std::string_view key, Bounds b) {
  const toml::node* n = node(key);
  if (n == nullptr) return std::nullopt;
  auto s = n->value_exact<std::string>();
  if (!s) return whole_value(*n, key, b, 0x1p64);
  auto v = parse_byte_size(*s);
  if (!v || !(static_cast<double>(*v) >= b.lo && static_cast<double>(*v) <= b.hi)) {
    fail(key, describe_bounds(b, true) + " (or a string such as \"64KiB\", \"4MiB\", \"1GiB\")", describe_value(*n));
    return std::nullopt;
  }
  return v;
}

Result<std::string> read_text_file(const std::string& path, std::string_view what, std::string_view hint) {
  // Every input railcheck reads is text of a few megabytes at most; a bigger one is refused
  // before it is read, and an empty one is an error rather than "every default".
  constexpr std::size_t kMaxInputBytes = 256ull << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    return Error{fmt::format("cannot open {} {}: no such file", what, path), std::string(hint)};
  if (std::filesystem::is_directory(status))
    return Error{fmt::format("cannot open {} {}: it is a directory", what, path), std::string(hint)};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open {} {}: {}", what, path, std::strerror(errno)), std::string(hint)};
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Error{fmt::format("cannot read {} {}: {}", what, path, std::strerror(err)), std::string(hint)};
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > kMaxInputBytes) {
      ::close(fd);
      return Error{fmt::format("cannot read {} {}: larger than {} MiB", what, path, kMaxInputBytes >> 20),
                   std::string(hint)};
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return Error{fmt::format("{} {} is empty", what, path), std::string(hint)};
  return text;
}

Result<toml::table> parse_toml(std::string_view text, const std::string& file, std::string_view docs_hint) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}: TOML syntax error at column {}: {}", file, e.source().begin.line,
                             e.source().begin.column, e.description()),
                 std::string(docs_hint)};
  }
}

}  // namespace railcheck
