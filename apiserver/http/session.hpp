// apiserver/http/session.hpp
//
// start_session(): serves one accepted connection of the API server until it closes:
// HTTP/1.1 requests one at a time (keep-alive), list bodies written in slices from the
// store's objects, and at most one watch, after which the connection closes
// (server.hpp states the bounds and deadlines; http/watch_stream.hpp what a watch sends).
//
// Contract
//   * A session is in one state at a time, a std::variant in session.cpp: Serving
//     (reading a request, handling it, writing its answer), WritingList (a list body in
//     slices), AwaitingRevision (a watch from a future resourceVersion, up to ~3 s) and
//     Watching. What only a watch has (its stream, timers' subject, wake-up ticket,
//     admission slot) exists only in AwaitingRevision or Watching.
//   * With `tls`, the session first does the server handshake within header_timeout.
// Threading: every handler of a session runs on its socket's strand; close() (through the
//   ConnectionRegistry) from any thread. Errors: none escape; a failure closes the connection.
// Only http/listener.cpp includes this header (it carries Asio types).
#pragma once

#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "apiserver/http/session_context.hpp"
#include "runtime/connection_registry.hpp"

namespace kinformer::apiserver {

/// `client`: the peer's IP address (its per-client connection count); `tls`: null for plain HTTP.
void start_session(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls, const SessionContext& context,
                   ConnectionRegistry& registry, std::string client);

}  // namespace kinformer::apiserver
