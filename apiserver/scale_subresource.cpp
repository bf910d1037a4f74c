#include "apiserver/scale_subresource.hpp"

#include <optional>

#include <nlohmann/json.hpp>

#include "apiserver/admission.hpp"
#include "apiserver/body_decoder.hpp"
#include "apiserver/printer_cells.hpp"
#include "apiserver/json_path.hpp"
#include "apiserver/patch.hpp"
#include "apiserver/served_crd.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

constexpr std::int64_t max_replicas = 2147483647;  // Scale's replicas are an int32

struct ScalePaths {
  JsonPath spec_replicas;
  JsonPath status_replicas;
  std::optional<JsonPath> selector;  // built-ins: a LabelSelector (RCs: a map); custom: a string
};

JsonPath known_path(const char* text) { return JsonPath::parse(text).value(); }

ApiResult<ScalePaths> scale_paths(const ResourceRegistry& registry, const Storage& storage, const ResourceType& type) {
  if (type.builtin)
    return ScalePaths{known_path(".spec.replicas"), known_path(".status.replicas"), known_path(".spec.selector")};
  auto version = served_crd_version(registry, storage, type);
  const json* scale = nullptr;
  if (version) {
    auto sub = version->find("subresources");
    if (sub != version->end() && sub->is_object())
      if (auto s = sub->find("scale"); s != sub->end() && s->is_object()) scale = &*s;
  }
  if (!scale) return ApiError::path_not_found();
  auto path_at = [&](const char* key) -> std::optional<JsonPath> {
    auto it = scale->find(key);
    if (it == scale->end() || !it->is_string()) return std::nullopt;
    auto parsed = JsonPath::parse(it->get<std::string>());
    if (!parsed) return std::nullopt;
    return std::move(parsed).value();
  };
  auto spec = path_at("specReplicasPath");
  auto status = path_at("statusReplicasPath");
  if (!spec || !status) return ApiError::path_not_found();
  return ScalePaths{std::move(*spec), std::move(*status), path_at("labelSelectorPath")};
}

std::int64_t integer_at(const JsonPath& path, const json& object) {
  const json* v = path.first(object);
  return v && v->is_number_integer() ? v->get<std::int64_t>() : 0;
}

json scale_of(const ResourceType& type, const ScalePaths& paths, const json& object) {
  json metadata = json::object();
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"})
      if (auto it = meta->find(key); it != meta->end()) metadata[key] = *it;
  json spec = json::object();
  if (auto replicas = integer_at(paths.spec_replicas, object); replicas != 0) spec["replicas"] = replicas;
  json status = {{"replicas", integer_at(paths.status_replicas, object)}};
  const json* selector = paths.selector ? paths.selector->first(object) : nullptr;
  std::string selector_text;
  if (selector && type.builtin)  // an RC's selector is a plain label map
    selector_text = label_selector_text(type.kind == "ReplicationController" ? json{{"matchLabels", *selector}} : *selector);
  else if (selector && selector->is_string())
    selector_text = selector->get<std::string>();
  if (!selector_text.empty()) status["selector"] = selector_text;
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

// The replica count a Scale asks for, and its resourceVersion precondition.
struct Wanted {
  std::int64_t replicas = 0;
  std::string resource_version;
};

ApiResult<Wanted> wanted_of(const json& scale, const std::string& name) {
  if (!scale.is_object()) return ApiError::bad_request("a Scale must be a JSON object");
  if (auto kind = scale.find("kind"); kind != scale.end() && !(kind->is_string() && (*kind == "Scale" || *kind == "")))
    return ApiError::bad_request("the kind in the body (" + kind->dump() + ") is not Scale");
  Wanted out;
  if (auto meta = scale.find("metadata"); meta != scale.end()) {
    if (!meta->is_object()) return ApiError::bad_request("metadata must be an object");
    if (auto n = meta->find("name"); n != meta->end() && !n->is_null() && !(n->is_string() && (*n == "" || *n == name)))
      return ApiError::bad_request("the name of the object (" + n->dump() + ") does not match the name on the URL (" + name + ")");
    if (auto rv = meta->find("resourceVersion"); rv != meta->end() && rv->is_string()) out.resource_version = rv->get<std::string>();
  }
  auto spec = scale.find("spec");
  if (spec == scale.end() || spec->is_null()) return out;
  if (!spec->is_object()) return ApiError::bad_request("spec must be an object");
  auto replicas = spec->find("replicas");
  if (replicas == spec->end() || replicas->is_null()) return out;
  if (!replicas->is_number_integer() || (replicas->is_number_unsigned() && replicas->get<std::uint64_t>() > max_replicas) ||
      replicas->get<std::int64_t>() > max_replicas)
    return ApiError::bad_request("spec.replicas must be an integer from 0 to " + std::to_string(max_replicas) + ", not " +
                                 replicas->dump());
  out.replicas = replicas->get<std::int64_t>();
  if (out.replicas < 0)
    return ApiError::invalid("autoscaling", "Scale", name,
                             {{"FieldValueInvalid",
                               "Invalid value: " + std::to_string(out.replicas) + ": must be greater than or equal to 0",
                               "spec.replicas"}});
  return out;
}

std::optional<ApiError> apply_scale_patch(const std::string& content_type, json& scale, const json& patch,
                                          const ObjectLimits& limits, WorkBudget& budget) {
  if (content_type == "application/merge-patch+json") return apply_merge_patch(scale, patch, budget);
  if (content_type == "application/strategic-merge-patch+json") return apply_strategic_merge_patch(scale, patch, budget);
  return apply_json_patch(scale, patch, limits, budget);
}

}  // namespace

HttpResponse serve_scale(const ResourceRegistry& registry, Storage& storage, const ObjectLimits& limits,
                         const ScaleRequest& request, WorkBudget& budget) {
  const ResourceType& type = *request.type;
  auto paths = scale_paths(registry, storage, type);
  if (!paths) return error_response(paths.error());
  auto answer = [&](const StoredObject& object) {
    return HttpResponse{200, "application/json", scale_of(type, *paths, json::parse(object.json)).dump(), nullptr};
  };
  if (request.method == "GET") {
    auto object = storage.get(type, request.namespace_name, request.name);
    if (!object) return error_response(object.error());
    return answer(**object);
  }
  if (request.method != "PUT" && request.method != "PATCH") return error_response(ApiError::method_not_allowed());

  const bool patching = request.method == "PATCH";
  const auto& ct = request.content_type;
  if (patching && ct != "application/merge-patch+json" && ct != "application/strategic-merge-patch+json" &&
      ct != "application/json-patch+json")
    return error_response(ApiError{415, "UnsupportedMediaType",
                                   "the body of the request was in an unknown format - accepted media types include: "
                                   "application/json-patch+json, application/merge-patch+json, "
                                   "application/strategic-merge-patch+json",
                                   {}, {}, {}, {}, {}});
  if (!patching && !ct.empty() && ct != "application/json") return error_response(ApiError::unsupported_media_type(ct));
  auto body = decode_body(request.body, BodyFormat::json, limits);
  if (!body) return error_response(body.error());
  std::optional<Wanted> put;
  if (!patching) {
    auto wanted = wanted_of(*body, request.name);
    if (!wanted) return error_response(wanted.error());
    put = wanted.value();
  }
  auto written = storage.write(
      type, request.namespace_name, request.name,
      [&](const json* current) -> ApiResult<json> {
        if (!current) return ApiError::not_found(type.group, type.plural, request.name);
        Wanted wanted;
        if (put) {
          wanted = *put;
        } else {
          json scale = scale_of(type, *paths, *current);
          if (auto failed = apply_scale_patch(ct, scale, *body, limits, budget)) return *failed;
          auto patched = wanted_of(scale, request.name);
          if (!patched) return patched.error();
          wanted = patched.value();
        }
        json result = *current;
        // The store answers 409 Conflict when this is not the stored version.
        if (!wanted.resource_version.empty()) result["metadata"]["resourceVersion"] = wanted.resource_version;
        if (auto set = paths->spec_replicas.set(result, wanted.replicas); !set)
          return ApiError::invalid(type.group, type.kind, request.name,
                                   {{"FieldValueInvalid", "Invalid value: " + set.error().message, paths->spec_replicas.text()}});
        if (auto refused = admit(registry, type, result, budget)) return *refused;
        return result;
      },
      false, request.dry_run);
  if (!written) return error_response(written.error());
  return answer(*written->object);
}

}  // namespace kinformer::apiserver
