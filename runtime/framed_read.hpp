// runtime/framed_read.hpp
//
// How every HTTP reader of ours (the API server, the metrics endpoint, the client) feeds
// bytes to Beast's parser: BufferedPut, and async_read_message built on it. In runtime/,
// beside http_framing.hpp, because the metrics endpoint (runtime/) uses it and
// runtime/http/ stands on runtime/.
//
// Why not Beast's own loop: Boost 1.74's basic_parser asserts `n >= 5` when it re-enters
// a last chunk ("0\r\n", a chunked body with no data chunk) that it first saw in 3 bytes
// and is then handed 4. A client that sends such a body a byte at a time aborted any
// build with assertions on (the ASan build, a user's Debug build); fuzz_http_request
// found it. With NDEBUG Beast parses it right, so holding that put back changes no
// result: after need_more Beast has consumed nothing of the tail, and fewer than 5 bytes
// can never end a message (a last chunk and its blank line are 5).
//
// Contract
//   * BufferedPut::operator()(parser, buffer): puts what `buffer` holds into `parser`,
//     consuming what it used, until the parser is done, needs bytes that are not there,
//     or fails. After need_more, a put of fewer than 5 bytes waits for the next read.
//     Returns the parser's error; need_more is not one. One BufferedPut per message:
//     it remembers whether its parser's last put needed more.
//   * async_read_message(stream, buffer, parser, handler): reads one whole message as
//     http::async_read does (the parser set eager; what is buffered is parsed first;
//     eof before any byte is http::error::end_of_stream, eof inside a message what
//     put_eof says; a buffer at its max_size with the message unfinished is
//     http::error::buffer_overflow), through BufferedPut. handler(beast::error_code)
//     never runs inside the call: with no read needed it is posted to the stream's
//     executor.
// Threading: as the stream's: one operation at a time, on its executor.
#pragma once

#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>
#include <cstddef>
#include <utility>

namespace kinformer {

class BufferedPut {
 public:
  /// The fewest bytes that can end a message after a need_more (a last chunk, "0\r\n\r\n").
  static constexpr std::size_t min_resumed_put = 5;

  template <class Parser>
  boost::beast::error_code operator()(Parser& parser, boost::beast::flat_buffer& buffer) {
    boost::beast::error_code ec;
    while (!parser.is_done() && buffer.size() > 0 && !(needs_more_ && buffer.size() < min_resumed_put)) {
      const std::size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      needs_more_ = ec == boost::beast::http::error::need_more;
      if (needs_more_) return {};
      if (ec) return ec;
      if (used == 0) break;
    }
    return {};
  }

 private:
  bool needs_more_ = false;
};

namespace detail {

template <class Stream, class Parser>
class ReadMessageOp {
 public:
  ReadMessageOp(Stream& stream, boost::beast::flat_buffer& buffer, Parser& parser)
      : stream_(stream), buffer_(buffer), parser_(parser) {}

  // Entered first with no arguments, then after each read, and once more after a post
  // when the message was already buffered (completing_).
  template <class Self>
  void operator()(Self& self, boost::beast::error_code ec = {}, std::size_t bytes = 0) {
    namespace http = boost::beast::http;
    if (completing_) return self.complete(ec);
    if (reading_) {
      reading_ = false;
      if (ec == boost::asio::error::eof) {
        if (!parser_.got_some()) return self.complete(http::error::end_of_stream);
        ec = {};
        parser_.put_eof(ec);
        return self.complete(ec);
      }
      if (ec) return self.complete(ec);
      buffer_.commit(bytes);
    } else {
      parser_.eager(true);
    }
    ec = put_(parser_, buffer_);
    if (!ec && !parser_.is_done()) {
      const std::size_t room = boost::beast::read_size(buffer_, 65536);
      if (room > 0) {
        reading_ = true;
        did_read_ = true;
        return stream_.async_read_some(buffer_.prepare(room), std::move(self));
      }
      ec = http::error::buffer_overflow;
    }
    if (did_read_) return self.complete(ec);
    completing_ = true;
    boost::asio::post(stream_.get_executor(), boost::beast::bind_front_handler(std::move(self), ec, std::size_t{0}));
  }

 private:
  Stream& stream_;
  boost::beast::flat_buffer& buffer_;
  Parser& parser_;
  BufferedPut put_;
  bool reading_ = false;
  bool did_read_ = false;
  bool completing_ = false;
};

}  // namespace detail

template <class Stream, class Parser, class Handler>
auto async_read_message(Stream& stream, boost::beast::flat_buffer& buffer, Parser& parser, Handler&& handler) {
  return boost::asio::async_compose<Handler, void(boost::beast::error_code)>(
      detail::ReadMessageOp<Stream, Parser>(stream, buffer, parser), handler, stream);
}

}  // namespace kinformer
