#include "apiserver/storage/snapshot.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "apiserver/crd.hpp"
#include "apiserver/storage/crc32c.hpp"
#include "apiserver/storage/files.hpp"
#include "apiserver/storage/persisted_object.hpp"
#include "runtime/log.hpp"

namespace kinformer::apiserver::storage {

using nlohmann::json;

namespace {

constexpr std::string_view checksum_marker = ",\"checksum\":\"crc32c:";

std::string hex32(std::uint32_t v) {
  char out[9];
  std::snprintf(out, sizeof out, "%08x", v);
  return out;
}

Result<Store::Contents> check_and_decode(const json& snapshot, const std::string& path,
                                         ResourceRegistry& registry) {
  auto fail = [&](const std::string& why) { return Error{Errc::decode_failed, path + ": " + why}; };
  auto revision = snapshot.find("revision");
  if (revision == snapshot.end() || !revision->is_number_unsigned() ||
      revision->get<std::uint64_t>() > max_revision)
    return fail("\"revision\" must be an integer in 0.." + std::to_string(max_revision) + ", not " +
                (revision == snapshot.end() ? std::string("absent") : revision->dump()));
  auto objects = snapshot.find("objects");
  if (objects == snapshot.end() || !objects->is_array()) return fail("\"objects\" must be an array");
  Store::Contents out;
  out.revision = revision->get<std::uint64_t>();
  std::set<std::pair<const ResourceType*, std::string>> keys;
  std::set<std::string> namespaces;
  const ResourceType* namespace_type = registry.namespaces();
  // The CRDs first: each serves its kind (apiserver/crd.hpp) before any object of it is read.
  const ResourceType* crd_type = registry.find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  const std::string crd_id = crd_type ? resource_id(*crd_type) : std::string();
  for (const bool crds : {true, false}) {
    for (std::size_t i = 0; i < objects->size(); ++i) {
      const auto& entry = (*objects)[i];
      auto where = path + ": objects[" + std::to_string(i) + "]";
      if (!entry.is_object())
        return fail("objects[" + std::to_string(i) + "] must be an object, not " + entry.dump());
      static const json missing;
      auto resource = entry.find("resource");
      const bool is_crd = crd_type && resource != entry.end() && *resource == crd_id;
      if (is_crd != crds) continue;
      auto object = entry.find("object");
      auto decoded = decode_persisted_object(registry, resource == entry.end() ? missing : *resource,
                                             object == entry.end() ? missing : *object, out.revision, where);
      if (!decoded) return std::move(decoded).error();
      StoredPtr stored = std::move(decoded).value();
      if (!keys.emplace(stored->type, stored->key).second)
        return fail("objects[" + std::to_string(i) + "]: " + stored->type->plural + " " + stored->key +
                    " appears twice");
      if (auto served = follow_crd(registry, EventType::added, *stored); !served)
        return fail("objects[" + std::to_string(i) + "]: " + served.error().message);
      if (stored->type == namespace_type) namespaces.insert(stored->name);
      out.objects.push_back(std::move(stored));
    }
  }
  for (const char* required : {"default", "kube-system", "kube-public"})
    if (!namespaces.count(required))
      return fail("the namespace \"" + std::string(required) + "\" is missing");
  for (const auto& stored : out.objects)
    if (stored->type->namespaced && !namespaces.count(stored->namespace_name))
      return fail(stored->type->plural + " " + stored->key + " is in the namespace \"" +
                  stored->namespace_name + "\", which the snapshot does not hold");
  return out;
}

}  // namespace

std::string render_snapshot(const Store::Contents& contents) {
  std::size_t size = 128;
  for (const auto& o : contents.objects) size += o->json.size() + 64;
  std::string text;
  text.reserve(size);
  text.append("{\"kind\":\"KinformerApiserverSnapshot\",\"version\":2,\"revision\":")
      .append(std::to_string(contents.revision))
      .append(",\"objects\":[");
  for (std::size_t i = 0; i < contents.objects.size(); ++i) {
    const auto& o = *contents.objects[i];
    if (i) text.push_back(',');
    text.append("{\"resource\":\"")
        .append(resource_id(*o.type))
        .append("\",\"object\":")
        .append(o.json)
        .append("}");
  }
  text.append("]");
  auto crc = crc32c(text);
  text.append(checksum_marker).append(hex32(crc)).append("\"}\n");
  return text;
}

Result<void> write_snapshot(const std::string& path, const Store::Contents& contents) {
  return write_file_atomically(path, render_snapshot(contents));
}

Result<Store::Contents> read_snapshot(const std::string& path, ResourceRegistry& registry) {
  auto text = read_file(path);
  if (!text) return std::move(text).error();
  return parse_snapshot(text.value(), path, registry);
}

Result<Store::Contents> parse_snapshot(const std::string& text, const std::string& path,
                                       ResourceRegistry& registry) {
  auto fail = [&](const std::string& why) { return Error{Errc::decode_failed, path + ": " + why}; };
  // The checksum first: a flipped byte is reported as such, not as whatever it broke.
  auto end = text.find_last_not_of(" \t\r\n");
  auto marker = text.rfind(checksum_marker);
  bool has_checksum = marker != std::string::npos && end != std::string::npos &&
                      end + 1 == marker + checksum_marker.size() + 10 &&
                      text.compare(marker + checksum_marker.size() + 8, 2, "\"}") == 0;
  if (has_checksum) {
    auto stored = text.substr(marker + checksum_marker.size(), 8);
    auto actual = hex32(crc32c(std::string_view(text).substr(0, marker)));
    if (stored != actual)
      return fail("the checksum does not match the content (crc32c " + actual + ", the file says " + stored +
                  "): the file was changed or damaged after it was written");
  }
  auto parsed = parse_persisted_json(text, "the file");
  if (!parsed) return fail(parsed.error().message);
  const json& snapshot = parsed.value();
  if (!snapshot.is_object()) return fail("not a JSON object (a damaged or foreign file)");
  auto kind = snapshot.find("kind");
  if (kind == snapshot.end() || *kind != "KinformerApiserverSnapshot")
    return fail("not a kinformer apiserver snapshot (\"kind\" is not \"KinformerApiserverSnapshot\")");
  auto version = snapshot.find("version");
  if (version == snapshot.end() || !version->is_number_unsigned() ||
      (version->get<std::uint64_t>() != 1 && version->get<std::uint64_t>() != 2))
    return fail("unsupported snapshot \"version\" (1 and 2 are known)");
  if (version->get<std::uint64_t>() == 2 && !has_checksum)
    return fail("the checksum at the end of the file is missing or damaged");
  if (version->get<std::uint64_t>() == 1)
    log::warn("apiserver", "a version 1 snapshot without a checksum: it is checked field by field",
              {{"file", path}});
  try {
    return check_and_decode(snapshot, path, registry);
  } catch (const std::exception& e) {  // a check above missed a type: still a clear error, never an abort
    return fail(std::string("malformed content: ") + e.what());
  }
}

}  // namespace kinformer::apiserver::storage
