#pragma once
// The text of a file shipped in the source tree (scenarios/sched/...), for tests.
#include <fstream>
#include <sstream>
#include <string>

namespace railcheck::plan {

inline std::string shipped_file(const std::string& rel) {
  std::ifstream f(std::string(RAILCHECK_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace railcheck::plan
