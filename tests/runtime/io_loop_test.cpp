// Tests for runtime/io_loop.hpp (issue 33): a handler's exception ends that handler and
// the connection it owned, never the loop.
#include "runtime/io_loop.hpp"

#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <stdexcept>

namespace kinformer {
namespace {

TEST_CASE("an exception out of a handler is caught and the loop runs the other handlers",
          "[io_loop][issue-33][unit]") {
  boost::asio::io_context ioc;
  auto owned = std::make_shared<int>(7);  // stands for a session its handlers own
  std::weak_ptr<int> watch = owned;
  bool later_ran = false;
  boost::asio::post(ioc, [owned = std::move(owned)] { throw std::length_error("field value too large"); });
  boost::asio::post(ioc, [&] { later_ran = true; });
  run_io_loop(ioc, "test");  // returns once the queue is empty; an escaped exception would end the test
  CHECK(later_ran);
  CHECK(watch.expired());  // the throwing handler's owner was released: its connection closes
}

}  // namespace
}  // namespace kinformer
