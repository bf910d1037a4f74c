// Tests for runtime/log.hpp: the line format, levels, one-line escaping and that
// secrets never reach the output.
#include "runtime/log.hpp"

#include <catch2/catch.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "tests/support/captured_log.hpp"

namespace kinformer {
namespace {

using testing::CapturedLog;

TEST_CASE("a record is a UTC timestamp level component message and key=value fields", "[log][item-3][unit]") {
  CapturedLog captured;
  log::set_level(log::Level::info);
  log::info("informer", "synced", {{"resource", "pods"}, {"objects", 3}, {"ok", true}});
  auto line = captured.out.str();
  INFO(line);
  CHECK(std::regex_match(line, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info informer synced )"
                                          R"(resource=pods objects=3 ok=true\n)")));
}

TEST_CASE("records below the level are not written", "[log][item-3][unit]") {
  CapturedLog captured;
  log::set_level(log::Level::warn);
  log::info("x", "hidden");
  log::debug("x", "hidden too");
  log::warn("x", "shown");
  log::error("x", "shown too");
  auto text = captured.out.str();
  CHECK(text.find("hidden") == std::string::npos);
  CHECK(text.find(" warn x shown\n") != std::string::npos);
  CHECK(text.find(" error x shown too\n") != std::string::npos);
  log::set_level(log::Level::off);
  log::error("x", "silenced");
  CHECK(captured.out.str().find("silenced") == std::string::npos);
}

TEST_CASE("values with spaces quotes or newlines are quoted so a record stays on one line",
          "[log][item-3][unit]") {
  CHECK(log::format_record("c", "two\nlines",
                           {{"key", "shop/web-0"}, {"why", "a \"b\"\nc\\d"}, {"empty", ""}}) ==
        "c two lines key=shop/web-0 why=\"a \\\"b\\\"\\nc\\\\d\" empty=\"\"");
}

TEST_CASE("level names parse and unknown ones are refused", "[log][item-3][unit]") {
  log::Level level = log::Level::info;
  CHECK(log::parse_level("debug", level));
  CHECK(level == log::Level::debug);
  CHECK_FALSE(log::parse_level("loud", level));
  CHECK(level == log::Level::debug);
}

TEST_CASE("a token never appears in the log output", "[log][item-3][unit]") {
  CapturedLog captured;
  log::set_level(log::Level::trace);
  const std::string token = "s3cr3t-t0ken-value";
  log::info("apiserver", "auth configured",
            {{"token", token}, {"bearer_token", token}, {"Authorization", token}});
  log::info("apiserver", "request header Authorization: Bearer " + token, {{"header", "Bearer " + token}});
  log::warn("client", "login", {{"password", token}, {"client_secret", token}, {"key", "default/web-0"}});
  auto text = captured.out.str();
  INFO(text);
  CHECK(text.find(token) == std::string::npos);
  CHECK(text.find("token=[redacted] bearer_token=[redacted] Authorization=[redacted]") != std::string::npos);
  CHECK(text.find("Bearer [redacted]") != std::string::npos);
  CHECK(text.find("key=default/web-0") != std::string::npos);  // object keys are not secrets
}

}  // namespace
}  // namespace kinformer
