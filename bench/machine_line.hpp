#pragma once
// What every benchmark prints first (STYLE.md 11): the machine and the date, so a recorded
// figure always says where and when it was measured.
#include <sys/utsname.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#include "cli/allocator.hpp"

namespace railcheck::bench {

inline std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return date;
}

// "2026-11-23 13:54 UTC | AMD EPYC | 2 logical CPUs | Linux 6.18.44 | jemalloc"
inline std::string machine_summary() {
  utsname u{};
  uname(&u);
  return utc_now() + " | " + cpu_model() + " | " + std::to_string(std::thread::hardware_concurrency()) +
         " logical CPUs | " + u.sysname + " " + u.release + " | " + std::string(cli::allocator_name());
}

// The routing benchmarks' first line: "# <CPU>, <n> cores, <date>".
inline void print_machine_line() {
  std::printf("# %s, %u cores, %s, %s\n", cpu_model().c_str(), std::thread::hardware_concurrency(), utc_now().c_str(),
              std::string(cli::allocator_name()).c_str());
}

}  // namespace railcheck::bench
