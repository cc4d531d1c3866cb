#include <catch2/catch.hpp>

#include "engine/core/excerpt.hpp"

using railcheck::escaped_excerpt;

TEST_CASE("escaped_excerpt: printable, short, and says when it cut", "[excerpt]") {
  CHECK(escaped_excerpt("plain text") == "plain text");
  CHECK(escaped_excerpt(std::string_view("a\0b\xff\n\t\\", 7)) == "a\\x00b\\xff\\x0a\\t\\\\");
  CHECK(escaped_excerpt(std::string(1000, 'x'), 10) == std::string(10, 'x') + "...");
  // Never more than max + a few characters of one escape, whatever the input.
  CHECK(escaped_excerpt(std::string(1000, '\x01'), 10).size() <= 10 + 3 + 4);
  CHECK(escaped_excerpt("") == "");
}
