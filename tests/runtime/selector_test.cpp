#include "runtime/selector.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "tests/support/objects.hpp"

using kinformer::Errc;
using kinformer::FieldSelector;
using kinformer::LabelSelector;

namespace {

bool selects(std::string_view selector, const std::map<std::string, std::string>& labels) {
  auto parsed = LabelSelector::parse(selector);
  REQUIRE(parsed);
  return parsed->matches(labels);
}

}  // namespace

TEST_CASE("the empty label selector selects everything", "[selector][unit]") {
  CHECK(selects("", {}));
  CHECK(selects("  ", {{"a", "b"}}));
  CHECK(LabelSelector().empty());
}

TEST_CASE("equality-based label requirements", "[selector][unit]") {
  const std::map<std::string, std::string> web{{"app", "web"}, {"tier", "front"}};
  CHECK(selects("app=web", web));
  CHECK(selects("app==web", web));
  CHECK_FALSE(selects("app=db", web));
  CHECK(selects("app!=db", web));
  CHECK_FALSE(selects("app!=web", web));
  SECTION("!= also matches objects without the key") { CHECK(selects("env!=prod", web)); }
  SECTION("all requirements must hold") {
    CHECK(selects("app=web,tier=front", web));
    CHECK_FALSE(selects("app=web,tier=back", web));
  }
  SECTION("key= selects the empty value only") {
    CHECK(selects("empty=", {{"empty", ""}}));
    CHECK_FALSE(selects("empty=", {}));
  }
}

TEST_CASE("set-based label requirements", "[selector][unit]") {
  const std::map<std::string, std::string> web{{"app", "web"}, {"tier", "front"}};
  CHECK(selects("app in (web, db)", web));
  CHECK_FALSE(selects("app in (db,cache)", web));
  CHECK(selects("app notin (db,cache)", web));
  CHECK_FALSE(selects("app notin (web)", web));
  CHECK(selects("env notin (prod)", web));
  CHECK_FALSE(selects("env in (prod)", web));
  CHECK(selects("app", web));
  CHECK_FALSE(selects("env", web));
  CHECK(selects("!env", web));
  CHECK_FALSE(selects("!app", web));
  CHECK(selects("app in (web),!env, tier", web));
}

TEST_CASE("numeric label requirements compare integers", "[selector][unit]") {
  CHECK(selects("replicas>2", {{"replicas", "10"}}));
  CHECK_FALSE(selects("replicas>20", {{"replicas", "10"}}));
  CHECK(selects("replicas<20", {{"replicas", "10"}}));
  CHECK_FALSE(selects("replicas<20", {}));
  CHECK_FALSE(selects("replicas<20", {{"replicas", "ten"}}));
}

TEST_CASE("label selectors match an Object's labels", "[selector][unit]") {
  auto pod = kinformer::testing::pod("p", "1", {{"app", "web"}, {"app.kubernetes.io/name", "shop"}});
  CHECK(LabelSelector::parse("app=web,app.kubernetes.io/name in (shop)").value().matches(*pod));
  CHECK_FALSE(LabelSelector::parse("app=db").value().matches(*pod));
}

TEST_CASE("invalid label selectors are reported with the reason and position", "[selector][unit]") {
  auto expect_error = [](std::string_view text, std::string_view fragment) {
    auto r = LabelSelector::parse(text);
    INFO(text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::invalid_selector);
    CHECK_THAT(r.error().message, Catch::Contains(std::string(fragment)));
  };
  expect_error("app=web,", "expected a label key");
  expect_error("app in web", "expected '('");
  expect_error("app in ()", "must not be empty");
  expect_error("app=we$b", "invalid label value");
  expect_error("-app=web", "invalid label key");
  expect_error("Example.COM/app=x", "prefix");
  expect_error("app web", "expected an operator");
  expect_error("app=web tier=x", "expected ',' or the end");
  expect_error("count>x", "expected an integer");
  expect_error(std::string(64, 'a') + "=x", "63 characters");
  auto r = LabelSelector::parse("app=web,=x");
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::EndsWith("at position 8"));
}

TEST_CASE("label selectors print canonically, sorted by key", "[selector][unit]") {
  auto s = LabelSelector::parse("tier notin (b, a), app==web, !env, count>3").value();
  CHECK(s.to_string() == "app=web,count>3,!env,tier notin (a,b)");
  CHECK(LabelSelector::parse(s.to_string()).value().to_string() == s.to_string());
}

TEST_CASE("field selectors match metadata and body fields", "[selector][unit]") {
  auto pod = kinformer::testing::pod("p", "1");
  CHECK(FieldSelector::parse("metadata.name=p").value().matches(*pod));
  CHECK(FieldSelector::parse("metadata.name==p,metadata.namespace=default").value().matches(*pod));
  CHECK_FALSE(FieldSelector::parse("metadata.namespace!=default").value().matches(*pod));
  CHECK(FieldSelector::parse("spec.nodeName=node-1").value().matches(*pod));
  CHECK(FieldSelector::parse("status.phase!=Running").value().matches(*pod));  // absent reads as ""
  CHECK(FieldSelector::parse("").value().matches(*pod));
}

TEST_CASE("field selector values unescape escaped commas, equals signs and backslashes", "[selector][unit]") {
  auto s = FieldSelector::parse(R"(metadata.name=a\,b\=c\\d)").value();
  REQUIRE(s.requirements().size() == 1);
  CHECK(s.requirements()[0].value == R"(a,b=c\d)");
  CHECK(s.to_string() == R"(metadata.name=a\,b\=c\\d)");
  auto fields = FieldSelector::parse("metadata.name=a,spec.nodeName!=n,metadata.name!=b").value().fields();
  CHECK(fields == std::vector<std::string>{"metadata.name", "spec.nodeName"});
}

TEST_CASE("invalid field selectors are reported", "[selector][unit]") {
  for (std::string_view text : {"metadata.name", "=x", "a=b=c", "a=b,,c=d", R"(a=b\x)", "a b=c"}) {
    auto r = FieldSelector::parse(text);
    INFO(text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::invalid_selector);
  }
}

// Issue 19 (fuzzing): a set holding only the empty value printed as "env in ()", which
// does not parse; it now prints as "(,)", which reads back as the same set.
TEST_CASE("issue 19: a set of only the empty value prints as text that parses back to it",
          "[selector][item-1][unit]") {
  for (const char* text : {"env in ( , ),acqy", "env notin (,)", "a in (,b),env in (,,)"}) {
    INFO(text);
    auto s = LabelSelector::parse(text);
    REQUIRE(s);
    auto again = LabelSelector::parse(s.value().to_string());
    REQUIRE(again);
    CHECK(again.value().to_string() == s.value().to_string());
    CHECK(again.value().requirements().size() == s.value().requirements().size());
  }
  CHECK(LabelSelector::parse("env in (,)").value().to_string() == "env in (,)");
  CHECK(LabelSelector::parse("env in (,)").value().matches(std::map<std::string, std::string>{{"env", ""}}));
  CHECK_FALSE(LabelSelector::parse("env in (,)").value().matches(std::map<std::string, std::string>{{"env", "a"}}));
}
