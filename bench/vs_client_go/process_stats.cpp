#include "bench/vs_client_go/process_stats.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace kinformer::bench {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "VmRSS:\t  1234 kB" -> 1234 (the number after `field`), 0 when absent.
std::uint64_t status_field(const std::string& status, const char* field) {
  const auto at = status.find(field);
  if (at == std::string::npos) return 0;
  return std::strtoull(status.c_str() + at + std::strlen(field), nullptr, 10);
}

}  // namespace

ProcessStats read_process_stats(pid_t pid) {
  ProcessStats stats;
  const std::string root = "/proc/" + std::to_string(pid);
  const std::string status = slurp(root + "/status");
  if (status.empty()) return stats;
  stats.rss_bytes = status_field(status, "VmRSS:") * 1024;
  stats.peak_rss_bytes = status_field(status, "VmHWM:") * 1024;

  // /proc/PID/stat: utime and stime are fields 14 and 15, counted after the ")" that
  // ends the command name (which may hold spaces).
  const std::string stat = slurp(root + "/stat");
  const auto close = stat.rfind(')');
  if (close != std::string::npos) {
    std::istringstream fields(stat.substr(close + 2));
    std::string skip;
    for (int i = 3; i < 14; ++i) fields >> skip;
    unsigned long long utime = 0, stime = 0;
    fields >> utime >> stime;
    stats.stat_cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

  DIR* tasks = ::opendir((root + "/task").c_str());
  if (!tasks) return stats;
  std::uint64_t run_ns = 0;
  while (const dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = root + "/task/" + entry->d_name;
    run_ns += std::strtoull(slurp(task + "/schedstat").c_str(), nullptr, 10);
    const std::string task_status = slurp(task + "/status");
    stats.voluntary_switches += status_field(task_status, "voluntary_ctxt_switches:");
    stats.involuntary_switches += status_field(task_status, "nonvoluntary_ctxt_switches:");
  }
  ::closedir(tasks);
  stats.cpu_seconds = static_cast<double>(run_ns) / 1e9;
  stats.valid = true;
  return stats;
}

double load_average_1m() {
  double load = 0;
  std::sscanf(slurp("/proc/loadavg").c_str(), "%lf", &load);
  return load;
}

}  // namespace kinformer::bench
