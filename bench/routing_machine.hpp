#pragma once
// The machine line every routing benchmark prints first: CPU model, cores, date (STYLE.md 11).
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

namespace railcheck::bench {

inline void print_machine_line() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::printf("# %s, %u cores, %s\n", model.c_str(), std::thread::hardware_concurrency(), date);
}

}  // namespace railcheck::bench
