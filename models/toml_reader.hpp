#pragma once
// Typed, checked reads from a toml++ document, for the scenario loader. Every problem becomes
// one line that names where it is and what was wrong:
//   <file>:<line>: <dotted.key>: expected <what>, got <what>
// The first problem wins. Reads after it still return a value or nothing, never throw, so the
// loader reads straight through a section and asks for the error once at the end.
#include <toml++/toml.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/core/time.hpp"

namespace railcheck {

// Inclusive range of a numeric key, in the unit the file writes it in.
struct Bounds {
  double lo = 0;
  double hi = std::numeric_limits<double>::infinity();
};

// The file name for messages and the first problem found.
class TomlReader {
 public:
  explicit TomlReader(std::string file) : file_(std::move(file)) {}

  // Records `<file>:<line>: <key>: expected <expected>, got <got>` unless a problem is already
  // recorded. `hint` says what to do; empty means "see the scenario docs".
  void fail(std::int64_t line, std::string_view key, std::string_view expected, std::string_view got,
            std::string_view hint = {});
  bool failed() const { return error_.has_value(); }
  const std::optional<Error>& error() const { return error_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::optional<Error> error_;
};

// One table of the document and its dotted path ("topology", "faults.flap[2]"). A table the
// file does not have is a view with present() == false: its reads all return nothing.
class TomlTable {
 public:
  TomlTable(TomlReader& reader, const toml::table* table, std::string path);

  bool present() const { return table_ != nullptr; }
  const toml::table* raw() const { return table_; }
  std::string key_path(std::string_view key) const;
  std::int64_t line() const;  // where the table starts (1 when unknown)

  // Every key must be one of `allowed`; the message lists them and suggests the nearest.
  void allow_only(std::span<const std::string_view> allowed);
  void allow_only(std::initializer_list<std::string_view> allowed) { allow_only({allowed.begin(), allowed.size()}); }
  // These keys must be present.
  void require(std::initializer_list<std::string_view> keys);

  TomlTable table(std::string_view key);                     // [key] or key = { ... }
  std::vector<TomlTable> table_array(std::string_view key);  // [[key]]

  std::optional<std::string> text(std::string_view key);
  std::optional<double> number(std::string_view key, Bounds b);
  // Integers; a float is accepted when it is whole (4.0), anything else is an error. The
  // value must also fit T, so a u32 field cannot wrap.
  template <typename T>
  std::optional<T> whole(std::string_view key, Bounds b) {
    auto v = whole_within(key, b, static_cast<double>(std::numeric_limits<T>::max()));
    if (!v) return std::nullopt;
    return static_cast<T>(*v);
  }
  std::vector<std::uint64_t> whole_array(std::string_view key, Bounds each);
  // Milliseconds or microseconds in the file, Nanos in memory (rounded to the nearest ns).
  std::optional<Nanos> millis(std::string_view key, Bounds b);
  std::optional<Nanos> micros(std::string_view key, Bounds b);
  // An integer number of bytes or a string with a binary unit: "4096", "64KiB", "4MiB", "1GiB".
  std::optional<std::uint64_t> byte_size(std::string_view key, Bounds b);
  // A number with no range check (the caller has its own), or a bool as 0/1 when allowed.
  std::optional<double> numeric(std::string_view key, std::string_view expected, bool accept_bool);

  // Record a problem with `key` (at its line, or the table's line when the key is absent).
  void fail(std::string_view key, std::string_view expected, std::string_view got, std::string_view hint = {});
  void fail_at(const toml::node& n, std::string_view key, std::string_view expected, std::string_view got,
               std::string_view hint = {});
  // Record a problem with the table as a whole (e.g. keys that do not fit together).
  void fail_here(std::string_view expected, std::string_view got, std::string_view hint = {});

 private:
  const toml::node* node(std::string_view key) const;
  std::optional<std::uint64_t> whole_within(std::string_view key, Bounds b, double type_max);
  std::optional<std::uint64_t> whole_value(const toml::node& n, std::string_view key, Bounds b, double type_max);

  TomlReader* reader_;
  const toml::table* table_;
  std::string path_;
};

// Read a whole file for a loader. `what` names it in messages ("scenario file"); `hint` says
// where to look. A missing path, a directory and a read error are each one clear line.
Result<std::string> read_text_file(const std::string& path, std::string_view what, std::string_view hint);
// Parse TOML; a syntax error becomes `<file>:<line>: TOML syntax error at column C: ...`.
Result<toml::table> parse_toml(std::string_view text, const std::string& file, std::string_view docs_hint);

// What a value is, for the "got" half of a message: "-3", "2.5", "\"many\"", "true", "a table".
std::string describe_value(const toml::node& n);
// The "expected" half for a numeric range: "a positive integer", "a number in [0, 1]", ...
std::string describe_bounds(Bounds b, bool integer);

}  // namespace railcheck
