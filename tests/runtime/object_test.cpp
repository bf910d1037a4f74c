#include "runtime/object.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/objects.hpp"

using kinformer::Errc;
using kinformer::Object;

namespace {

const std::string full_pod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "web-7d9f8-x2k4p", "generateName": "web-7d9f8-", "namespace": "prod",
    "uid": "3f1c9a2e", "resourceVersion": "184467321", "generation": 3,
    "creationTimestamp": "2024-05-14T09:21:33Z",
    "labels": {"app": "web", "tier": "front", "version": "v2"},
    "annotations": {"note": "say \"hi\"", "prometheus.io/scrape": "true"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f8",
                         "uid": "9a8b", "controller": true, "blockOwnerDeletion": false}],
    "managedFields": [{"manager": "kubelet"}]
  },
  "spec": {"nodeName": "node-7", "containers": [{"name": "web", "ports": [{"containerPort": 8080}]}],
           "priority": 10, "hostNetwork": false},
  "status": {"phase": "Running"}
})";

}  // namespace

TEST_CASE("an Object exposes its type and object metadata", "[object][unit]") {
  auto parsed = Object::parse(full_pod);
  REQUIRE(parsed);
  const Object& pod = **parsed;
  CHECK(pod.api_version() == "v1");
  CHECK(pod.kind() == "Pod");
  CHECK(pod.name() == "web-7d9f8-x2k4p");
  CHECK(pod.generate_name() == "web-7d9f8-");
  CHECK(pod.namespace_() == "prod");
  CHECK(pod.uid() == "3f1c9a2e");
  CHECK(pod.resource_version() == "184467321");
  CHECK(pod.generation() == 3);
  CHECK(pod.creation_timestamp() == "2024-05-14T09:21:33Z");
  CHECK(pod.deletion_timestamp().empty());
  CHECK(pod.key() == "prod/web-7d9f8-x2k4p");
  CHECK(pod.json() == full_pod);
}

TEST_CASE("labels and annotations keep document order and unescape values", "[object][unit]") {
  auto pod = Object::parse(full_pod).value();
  auto labels = pod->labels();
  REQUIRE(labels.size() == 3);
  CHECK(labels[0].key == "app");
  CHECK(labels[1].key == "tier");
  CHECK(labels[2].value == "v2");
  CHECK(pod->label("tier") == std::optional<std::string_view>("front"));
  CHECK_FALSE(pod->label("missing"));
  CHECK(pod->annotation("note") == std::optional<std::string_view>("say \"hi\""));
  CHECK(pod->annotations().size() == 2);
}

TEST_CASE("owner references are read with their flags", "[object][unit]") {
  // The references are views into the object: it must outlive them. (Issue 19: ASan found
  // this test reading them after the temporary ObjectPtr had freed the object.)
  const auto pod = Object::parse(full_pod).value();
  auto owners = pod->owner_references();
  REQUIRE(owners.size() == 1);
  CHECK(owners[0].kind == "ReplicaSet");
  CHECK(owners[0].name == "web-7d9f8");
  CHECK(owners[0].controller);
  CHECK_FALSE(owners[0].block_owner_deletion);
}

TEST_CASE("a cluster-scoped object's key is its name", "[object][unit]") {
  auto ns = Object::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-system"}})").value();
  CHECK(ns->key() == "kube-system");
  CHECK(ns->namespace_().empty());
}

TEST_CASE("escaped metadata strings are unescaped, unicode included", "[object][unit]") {
  auto obj = Object::parse(
                 R"({"kind":"ConfigMap","metadata":{"name":"caf\u00e9","namespace":"a\/b","labels":{"k\"ey":"\ud83d\ude00"}}})")
                 .value();
  CHECK(obj->name() == "caf\xC3\xA9");
  CHECK(obj->namespace_() == "a/b");
  CHECK(obj->key() == "a/b/caf\xC3\xA9");
  CHECK(obj->label("k\"ey") == std::optional<std::string_view>("\xF0\x9F\x98\x80"));
}

TEST_CASE("long strings are kept in place, and escapes anywhere in them are decoded", "[object][unit]") {
  const std::string plain(3000, 'p');
  const std::string run(700, 'r');
  // raw JSON text → decoded value: escapes first, last, back to back, between long runs,
  // and an escaped backslash just before the closing quote
  const std::vector<std::pair<std::string, std::string>> values = {
      {plain, plain},
      {R"(\")" + run, "\"" + run},
      {run + R"(\n)", run + "\n"},
      {run + R"(\"\\\/)" + run + R"(\u00e9)" + run, run + "\"\\/" + run + "\xC3\xA9" + run},
      {R"(a\\)", "a\\"},
      {R"(\\\\\")", "\\\\\""},
  };
  for (const auto& [raw, decoded] : values) {
    INFO(raw.substr(0, 40));
    const auto obj =
        Object::parse(R"({"kind":"ConfigMap","metadata":{"name":"x","annotations":{"a":")" + raw + R"("}}})")
            .value();
    CHECK(obj->annotation("a") == std::optional<std::string_view>(decoded));
  }
  // without escapes the value is a view into the JSON bytes, not a copy
  const auto obj =
      Object::parse(R"({"kind":"ConfigMap","metadata":{"name":"x","annotations":{"a":")" + plain + R"("}}})").value();
  const std::string_view value = *obj->annotation("a");
  CHECK(value.data() >= obj->json().data());
  CHECK(value.data() + value.size() <= obj->json().data() + obj->json().size());
}

TEST_CASE("null metadata fields read as empty", "[object][unit]") {
  auto obj = Object::parse(
                 R"({"kind":"Pod","metadata":{"name":"x","namespace":"d","creationTimestamp":null,"labels":null,"generation":null}})")
                 .value();
  CHECK(obj->creation_timestamp().empty());
  CHECK(obj->label_count() == 0);
  CHECK(obj->generation() == 0);
}

TEST_CASE("field() reads the body lazily by dotted path", "[object][unit]") {
  auto pod = Object::parse(full_pod).value();
  CHECK(pod->field("spec.nodeName").value() == "node-7");
  CHECK(pod->field("status.phase").value() == "Running");
  CHECK(pod->field("spec.priority").value() == "10");
  CHECK(pod->field("spec.hostNetwork").value() == "false");
  CHECK(pod->field("metadata.annotations.note").value() == "say \"hi\"");
  auto containers = pod->field("spec.containers");
  REQUIRE(containers);
  CHECK(containers.value().front() == '[');
  CHECK(containers.value().find("8080") != std::string::npos);
  auto missing = pod->field("spec.schedulerName");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::missing_field);
  CHECK_FALSE(pod->field("spec.nodeName.deeper"));
}

TEST_CASE("malformed JSON gives decode_failed with a reason and byte offset", "[object][unit]") {
  SECTION("a document that is not an object") {
    auto r = Object::parse(R"([1,2])");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::decode_failed);
    CHECK(r.error().message.find("not a JSON object") != std::string::npos);
  }
  SECTION("a metadata string of the wrong type") {
    auto r = Object::parse(R"({"metadata":{"name":42}})");
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "metadata.name must be a string at byte 20");
  }
  SECTION("trailing content after the object") {
    auto r = Object::parse(R"({"metadata":{"name":"a"}} x)");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::decode_failed);
    CHECK(r.error().message.find("malformed JSON") != std::string::npos);
  }
  SECTION("a missing closing brace in the unparsed body") {
    auto r = Object::parse(R"({"metadata":{"name":"a"},"spec":{"x":[1,2})");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::decode_failed);
    CHECK(r.error().message.find("byte") != std::string::npos);
  }
  SECTION("empty input") {
    auto r = Object::parse("");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::decode_failed);
  }
}

TEST_CASE("an object without a name is rejected as missing_field", "[object][unit]") {
  auto r = Object::parse(R"({"kind":"Pod","metadata":{"namespace":"d"}})");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::missing_field);
}

TEST_CASE("every truncation of a valid object is reported, never accepted or crashed on", "[object][unit]") {
  const std::string json = kinformer::testing::pod_json("foo", "12", {{"app", "x"}});
  for (std::size_t n = 0; n < json.size(); ++n) {
    auto r = Object::parse(std::string_view(json).substr(0, n));
    INFO("truncated at " << n);
    REQUIRE_FALSE(r);
    CHECK(r.error().code != Errc::missing_field);  // truncation is a decode failure
  }
  CHECK(Object::parse(json));
}

// Issue 19 (fuzzing): value::is_null() on a malformed token returned an error whose
// conversion to bool threw simdjson_error out of Object::parse (found by fuzz_object).
TEST_CASE("issue 19: a malformed token where null is checked is a decode error, not an exception",
          "[object][item-1][unit]") {
  for (const char* json : {
           R"({"metadata":{"name":"a","ownerReferences":[{"controller":nmespac:adatatrue}]}})",
           R"({"metadata":{"name":"a","ownerReferences":[{"blockOwnerDeletion":nul}]}})",
           R"({"metadata":{"name":"a","generation":nope}})",
           R"({"metadata":{"name":"a","labels":nan}})",
           R"({"metadata":{"name":nil}})",
           R"({"metadata":nx})",
       }) {
    INFO(json);
    REQUIRE_NOTHROW(Object::parse(json));
    auto parsed = Object::parse(json);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().code == Errc::decode_failed);
  }
}

TEST_CASE("an ObjectPtr counts references as shared_ptr<const Object> did, in one pointer", "[object][unit]") {
  STATIC_REQUIRE(sizeof(kinformer::ObjectPtr) == sizeof(void*));
  kinformer::ObjectPtr first = Object::parse(full_pod).value();
  CHECK(first.use_count() == 1);
  kinformer::ObjectPtr copy = first;
  CHECK(first.use_count() == 2);
  CHECK(copy == first);
  CHECK(copy.get() == first.get());
  kinformer::ObjectPtr moved = std::move(copy);
  CHECK(copy == nullptr);  // NOLINT(bugprone-use-after-move): a moved-from ObjectPtr is null
  CHECK_FALSE(copy);
  CHECK(copy.use_count() == 0);
  CHECK(moved.use_count() == 2);
  moved.reset();
  CHECK(moved == nullptr);
  CHECK(first.use_count() == 1);

  kinformer::ObjectPtr shared = kinformer::ObjectPtr::share(*first);
  CHECK(shared == first);
  CHECK(first.use_count() == 2);
  const Object* released = shared.release();
  CHECK(shared == nullptr);
  CHECK(first.use_count() == 2);  // the released reference still counts
  kinformer::ObjectPtr adopted = kinformer::ObjectPtr::adopt(released);
  CHECK(first.use_count() == 2);
  adopted = nullptr;
  CHECK(first.use_count() == 1);

  kinformer::ObjectPtr other = Object::parse(kinformer::testing::pod_json("other", "1")).value();
  CHECK(first != other);
  CHECK((first < other) != (other < first));
  CHECK(std::hash<kinformer::ObjectPtr>{}(first) == std::hash<const Object*>{}(first.get()));
  other = first;  // copy-assignment drops the other object's only reference
  CHECK(first.use_count() == 2);
  CHECK(other->name() == "web-7d9f8-x2k4p");
}

TEST_CASE("an Object shared by many threads stays whole until its last ObjectPtr goes", "[object][unit]") {
  kinformer::ObjectPtr object = Object::parse(full_pod).value();
  const std::string json(object->json());
  std::atomic<int> wrong_keys{0};  // Catch2's assertions are for the main thread only
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&object, &wrong_keys] {
      for (int i = 0; i < 20000; ++i) {
        kinformer::ObjectPtr copy = object;  // concurrent copies of one shared variable, read only
        kinformer::ObjectPtr again = kinformer::ObjectPtr::share(*copy);
        if (again->key() != "prod/web-7d9f8-x2k4p") ++wrong_keys;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(wrong_keys == 0);
  CHECK(object.use_count() == 1);
  CHECK(object->json() == json);
}

TEST_CASE("each metadata string reads back whichever others are absent", "[object][unit]") {
  // Only non-empty metadata strings keep a span, so every subset must find its own.
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"generateName", "web-"}, {"namespace", "prod"}, {"uid", "u-1"}, {"resourceVersion", "42"},
      {"creationTimestamp", "2024-05-14T09:21:33Z"}, {"deletionTimestamp", "2024-05-15T00:00:00Z"}};
  for (unsigned mask = 0; mask < (1u << fields.size()); ++mask) {
    std::string meta = R"("name":"n")";
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (mask & (1u << i)) meta += ",\"" + fields[i].first + "\":\"" + fields[i].second + "\"";
    const bool typed = mask & 1u;
    const std::string json = std::string("{") + (typed ? R"("apiVersion":"v1","kind":"Pod",)" : "") +
                             R"("metadata":{)" + meta + R"(,"labels":{"a":"b"}},"spec":{}})";
    INFO(json);
    auto parsed = Object::parse(json);
    REQUIRE(parsed);
    const Object& o = *parsed.value();
    auto expect = [&](std::size_t i) { return (mask & (1u << i)) ? fields[i].second : std::string(); };
    CHECK(o.api_version() == (typed ? "v1" : ""));
    CHECK(o.kind() == (typed ? "Pod" : ""));
    CHECK(o.name() == "n");
    CHECK(o.generate_name() == expect(0));
    CHECK(o.namespace_() == expect(1));
    CHECK(o.uid() == expect(2));
    CHECK(o.resource_version() == expect(3));
    CHECK(o.creation_timestamp() == expect(4));
    CHECK(o.deletion_timestamp() == expect(5));
    CHECK(o.key() == (expect(1).empty() ? "n" : expect(1) + "/n"));
    CHECK(o.label("a") == std::optional<std::string_view>("b"));
    CHECK(o.json() == json);
  }
}

TEST_CASE("spans read back on both sides of the 64 KiB text that 16-bit spans hold", "[object][unit]") {
  // Below 64 KiB of text (JSON, unescaped strings, key) a span is two 16-bit halves;
  // from there on, two 32-bit ones. A pad sweeps the text across the boundary, and
  // the escaped strings (unescaped after the JSON) and the key land on either side.
  const std::string head =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w\u00e9b","namespace":"prod","uid":"u-1",)"
      R"("resourceVersion":"42","labels":{"app":"web","t\"ier":"front"},"annotations":{"pad":")";
  const std::string tail =
      R"(","note":"say \"hi\""},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs",)"
      R"("uid":"9a8b","controller":true},{"apiVersion":"v1","kind":"Node","name":"n\u00e9",)"
      R"("uid":"7c","blockOwnerDeletion":true}]},"spec":{}})";
  const std::size_t boundary = 0x10000 - head.size() - tail.size();
  std::vector<std::size_t> pads;
  for (std::size_t pad = boundary - 40; pad <= boundary + 8; ++pad) pads.push_back(pad);
  pads.push_back(3 * boundary);  // offsets far past 16 bits
  std::size_t narrow = 0, wide = 0;
  for (const std::size_t pad : pads) {
    const std::string json = head + std::string(pad, 'p') + tail;
    INFO("JSON of " << json.size() << " B");
    const auto parsed = Object::parse(json);
    REQUIRE(parsed);
    const Object& o = *parsed.value();
    CHECK(o.api_version() == "v1");
    CHECK(o.kind() == "Pod");
    CHECK(o.name() == "w\xC3\xA9" "b");
    CHECK(o.namespace_() == "prod");
    CHECK(o.uid() == "u-1");
    CHECK(o.resource_version() == "42");
    CHECK(o.key() == "prod/w\xC3\xA9" "b");
    CHECK(o.label("app") == std::optional<std::string_view>("web"));
    CHECK(o.label("t\"ier") == std::optional<std::string_view>("front"));
    CHECK(o.annotation("pad") == std::optional<std::string_view>(std::string(pad, 'p')));
    CHECK(o.annotation("note") == std::optional<std::string_view>("say \"hi\""));
    const auto owners = o.owner_references();
    REQUIRE(owners.size() == 2);
    CHECK((owners[0].api_version == "apps/v1" && owners[0].kind == "ReplicaSet" && owners[0].name == "rs" &&
           owners[0].uid == "9a8b" && owners[0].controller && !owners[0].block_owner_deletion));
    CHECK((owners[1].api_version == "v1" && owners[1].kind == "Node" && owners[1].name == "n\xC3\xA9" &&
           owners[1].uid == "7c" && !owners[1].controller && owners[1].block_owner_deletion));
    CHECK(o.json() == json);
    // 23 spans (7 metadata strings with the key, 2 per label and annotation, 4 per
    // owner) and a flags byte per owner
    const std::size_t text = json.size() + std::string("w\xC3\xA9" "b" "t\"ier" "say \"hi\"" "n\xC3\xA9"
                                                        "prod/w\xC3\xA9" "b").size();
    const std::size_t spans = 7 + 2 * 4 + 4 * 2;
    const std::size_t aligned = (text + 3) / 4 * 4;
    if (text <= 0xFFFF) {
      ++narrow;
      CHECK(o.owned_bytes() == aligned + 4 * spans + 2);
    } else {
      ++wide;
      CHECK(o.owned_bytes() == aligned + 8 * spans + 2);
    }
  }
  CHECK(narrow > 0);
  CHECK(wide > 0);
}
