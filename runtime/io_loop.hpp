// runtime/io_loop.hpp
//
// run_io_loop(): runs an io_context on the calling thread so that an exception out of a
// handler ends that handler, never the process (issue 33: Beast's parser threw
// std::length_error for a chunked trailer field over 64 KiB, and the uncaught exception
// aborted the server on the API port, the metrics port and TLS alike).
//
// Contract
//   * Returns when ioc.run() returns (the io_context stopped or ran out of work).
//   * An exception out of a handler is logged (component, what()) and the loop goes on.
//     The handler that threw is destroyed while the exception unwinds, and with it the
//     owning reference its connection's session held: a connection owned only by its
//     pending operations, as every session of ours is, closes. The others are untouched.
// Threading: one call per I/O thread. Errors: none escape.
#pragma once

#include <exception>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "runtime/log.hpp"

namespace kinformer {

inline void run_io_loop(boost::asio::io_context& ioc, std::string_view component) {
  while (true) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      log::error(component, "a connection's handler threw; that connection is closed", {{"error", e.what()}});
    } catch (...) {
      log::error(component, "a connection's handler threw a non-standard exception; that connection is closed");
    }
  }
}

}  // namespace kinformer
