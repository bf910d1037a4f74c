// tests/support/captured_log.hpp
//
// CapturedLog: what runtime/log.hpp writes while it lives, for tests that check a
// log line (fields, redaction). Restores stderr and the level when it ends.
// Threading: lines written by actors are serialised by the logger; read text()
// once they have stopped writing.
#pragma once

#include <sstream>
#include <string>

#include "runtime/log.hpp"

namespace kinformer::testing {

struct CapturedLog {
  std::ostringstream out;
  log::Level saved = log::level();
  CapturedLog() { log::log_to(out); }
  ~CapturedLog() {
    log::log_to_stderr();
    log::set_level(saved);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
};

}  // namespace kinformer::testing
