// Over ~600 lines on purpose: one RequestHandler holds the sequence each verb runs (get, list,
// watch, create, update, patch, apply, delete, subresources); the rules it applies already live
// in their own files (read_rules, object_rules, patch, table_printer, scale_subresource...).
#include "apiserver/api.hpp"

#include <algorithm>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "apiserver/admission.hpp"
#include "apiserver/body_decoder.hpp"
#include "apiserver/crd.hpp"
#include "apiserver/delete_options.hpp"
#include "apiserver/discovery.hpp"
#include "apiserver/managed_fields.hpp"
#include "apiserver/object_limits.hpp"
#include "apiserver/object_rules.hpp"
#include "apiserver/patch.hpp"
#include "apiserver/protobuf_decoder.hpp"
#include "apiserver/read_rules.hpp"
#include "apiserver/request_params.hpp"
#include "apiserver/resource_version.hpp"
#include "apiserver/scale_subresource.hpp"
#include "apiserver/served_crd.hpp"
#include "apiserver/table_printer.hpp"
#include "apiserver/watch_encoder.hpp"
#include "apiserver/work_budget.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// A patch that loses the race to a concurrent write is recomputed this many times.
constexpr int max_patch_attempts = 16;

// kube-apiserver's NamespaceLifecycle admission: these are never deleted.
bool is_protected_namespace(const std::string& name) {
  return name == "default" || name == "kube-system" || name == "kube-public" || name == "kube-node-lease";
}

bool is_namespaces(const ResourceType& type) { return type.group.empty() && type.plural == "namespaces"; }

ApiError namespace_not_deletable(const std::string& name) {
  return ApiError::forbidden("", "namespaces", name, "this namespace may not be deleted");
}

HttpResponse ok_json(std::string body, int status = 200) {
  return HttpResponse{status, "application/json", std::move(body), nullptr};
}

// Built-in list items omit kind/apiVersion (§A3); custom resource items keep them.
void append_list_item(std::string& out, const StoredObject& object) {
  if (!object.type->builtin) {
    out += object.json;
    return;
  }
  auto [first, second] = object.untyped_pieces();
  out.append(first).append(second);
}

std::string base_content_type(const std::string& content_type) {
  auto semi = content_type.find(';');
  std::string base = content_type.substr(0, semi);
  base.erase(std::remove(base.begin(), base.end(), ' '), base.end());
  std::transform(base.begin(), base.end(), base.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return base;
}

ApiResult<bool> dry_run_of(const Query& q) {
  auto it = q.find("dryRun");
  if (it == q.end() || it->second.empty()) return false;
  if (it->second == "All") return true;
  return ApiError::bad_request("unsupported dryRun value \"" + it->second + "\": only All is supported");
}

// Where a request points once the group/version prefix is stripped.
struct Target {
  const ResourceType* type = nullptr;
  std::string namespace_name;  // "" = cluster-scoped or all namespaces
  std::string name;            // "" = the collection
  std::string subresource;
};

class RequestHandler {
 public:
  RequestHandler(ResourceRegistry& registry, Storage& store, const ObjectLimits& limits, const HttpRequest& request,
                 Query query)
      : registry_(registry),
        store_(store),
        limits_(limits),
        request_(request),
        query_(std::move(query)),
        budget_(limits.work) {
    budget_.allow_bytes(request.body.size());
  }

  ApiReply dispatch(const Target& t) {
    const auto& m = request_.method;
    if (t.subresource == "scale" && t.type->scale_subresource && !t.name.empty()) return scale(t);
    if (!t.subresource.empty() && (t.subresource != "status" || !t.type->status_subresource))
      return error_response(ApiError::path_not_found());
    if (t.name.empty()) {
      if (m == "GET") return flag(query_, "watch") ? watch(t) : ApiReply(list(t));
      if (m == "POST") {
        if (t.type->namespaced && t.namespace_name.empty()) return error_response(ApiError::method_not_allowed());
        return create(t);
      }
      if (m == "DELETE") return delete_collection(t);
      return error_response(ApiError::method_not_allowed());
    }
    if (m == "GET") return get(t);
    if (m == "PUT") return update(t);
    if (m == "PATCH") return patch(t);
    if (m == "DELETE" && t.subresource.empty()) return remove(t);
    return error_response(ApiError::method_not_allowed());
  }

 private:
  HttpResponse scale(const Target& t) {
    auto dry = dry_run_of(query_);
    if (!dry) return error_response(dry.error());
    return serve_scale(registry_, store_, limits_,
                       {t.type, t.namespace_name, t.name, request_.method, base_content_type(request_.content_type),
                        request_.body, dry.value()},
                       budget_);
  }

  ApiResult<ObjectFilter> filter_for(const Target& t) const {
    return ObjectFilter::parse(*t.type, t.namespace_name, param(query_, "labelSelector"), param(query_, "fieldSelector"));
  }

  HttpResponse list(const Target& t) {
    auto filter = filter_for(t);
    if (!filter) return error_response(filter.error());
    ListParams params{param(query_, "resourceVersion"), param(query_, "resourceVersionMatch"),
                      param(query_, "continue"), 0, flag(query_, "sendInitialEvents")};
    if (auto l = param(query_, "limit"); !l.empty()) {
      auto parsed = parse_unsigned(l);
      if (!parsed) return error_response(ApiError::bad_request("invalid limit \"" + l + "\": must be a non-negative integer"));
      params.limit = static_cast<std::size_t>(*parsed);
    }
    auto printer = table_printer_for(t);
    if (!printer) return error_response(printer.error());
    auto planned = plan_list(store_, *t.type, params);
    if (!planned) return error_response(planned.error());
    Store::ListQuery q = std::move(planned).value();
    q.namespace_name = t.namespace_name;
    const ObjectFilter& f = filter.value();
    if (f.has_selectors()) q.filter = [&f](const StoredObject& o) { return f.matches(o); };
    auto page = store_.list(*t.type, q);
    if (!page) return error_response(page.error());
    TableListMeta meta{page->revision, {}, std::nullopt};
    if (!page->last_key.empty()) {
      if (!f.has_selectors()) meta.remaining = page->remaining;
      meta.continue_token = encode_continue(page->revision, page->last_key, meta.remaining);
    }
    if (*printer) return HttpResponse{200, (*printer)->content_type(), (*printer)->list(page->items, meta), nullptr};
    auto body = std::make_shared<ListBody>();
    body->head = "{\"kind\":\"" + t.type->list_kind() + "\",\"apiVersion\":\"" + t.type->api_version() +
                 "\",\"metadata\":{\"resourceVersion\":\"" + format_resource_version(page->revision) + "\"";
    if (!meta.continue_token.empty()) {
      body->head += ",\"continue\":\"" + meta.continue_token + "\"";
      if (meta.remaining) body->head += ",\"remainingItemCount\":" + std::to_string(*meta.remaining);
    }
    body->head += "},\"items\":[";
    body->items = std::move(page->items);
    body->untyped = t.type->builtin;
    body->tail = "]}";
    HttpResponse response = ok_json("");
    response.list = std::move(body);
    return response;
  }

  ApiReply watch(const Target& t) {
    auto filter = filter_for(t);
    if (!filter) return error_response(filter.error());
    auto printer = table_printer_for(t);
    if (!printer) return error_response(printer.error());
    const bool initial_events = flag(query_, "sendInitialEvents");
    auto start = plan_watch(
        store_, *t.type, {param(query_, "resourceVersion"), param(query_, "resourceVersionMatch"), initial_events});
    if (!start) return error_response(start.error());
    // Over HTTP a watch at a revision this server has not reached (a restart without
    // its data file) waits up to future_watch_wait for it and is then kube-apiserver's
    // 504 "Too large resource version" (the session does both: wait_for_revision), so
    // the client relists at "" instead of waiting for events that may never come. In
    // process, StoreListWatch keeps waiting for the revision.
    WatchPlan plan{std::move(filter).value(),
                   start->start_after,
                   {},
                   {},
                   std::nullopt,
                   flag(query_, "allowWatchBookmarks"),
                   {},
                   start->wait_for_revision,
                   {}};
    if (auto ts = param(query_, "timeoutSeconds"); !ts.empty()) {
      auto seconds = parse_unsigned(ts);
      if (!seconds) return error_response(ApiError::bad_request("invalid timeoutSeconds \"" + ts + "\""));
      // chrono arithmetic on a steady_clock deadline overflows past ~292 years
      plan.timeout = std::chrono::seconds(std::min<std::uint64_t>(*seconds, max_watch_timeout_seconds));
    }
    if (plan.timeout.count() == 0) {
      // kube-apiserver: a random time between the minimum request timeout (1800 s) and twice that
      static thread_local std::mt19937 rng{std::random_device{}()};
      plan.timeout = std::chrono::seconds(1800 + rng() % 1800);
    }
    if (start->final_error) {
      plan.final_error = error_line(*start->final_error);
      return plan;
    }
    if (start->replay_state) {
      Store::ListQuery q;
      q.namespace_name = plan.filter.namespace_name();
      const ObjectFilter& f = plan.filter;
      q.filter = [&f](const StoredObject& o) { return f.matches(o); };
      auto page = store_.list(*t.type, q);
      if (!page) return error_response(page.error());
      plan.initial_objects = std::move(page->items);
      plan.start_after = page->revision;
      if (initial_events && plan.bookmarks)
        plan.initial_lines.push_back(bookmark_line(*t.type, page->revision, true));
    }
    if (*printer) as_table_watch(plan, std::move(printer).value());
    return plan;
  }

  // A Table watch sends the initial state as rendered lines; live events and
  // bookmarks are rewritten as they are sent (WatchPlan::rewrite_line).
  static void as_table_watch(WatchPlan& plan, std::shared_ptr<const TablePrinter> printer) {
    plan.rewrite_line = table_watch_rewriter(std::move(printer));
    std::vector<std::string> lines;
    for (const auto& object : plan.initial_objects) lines.push_back(plan.rewrite_line(event_line(LineType::added, object->json)));
    for (const auto& line : plan.initial_lines) lines.push_back(plan.rewrite_line(line));
    plan.initial_objects.clear();
    plan.initial_lines = std::move(lines);
  }

  // The Table the Accept header asks for (a null printer: plain JSON).
  ApiResult<std::shared_ptr<const TablePrinter>> table_printer_for(const Target& t) const {
    auto wanted = table_request(request_.accept, param(query_, "includeObject"));
    if (!wanted) return wanted.error();
    if (!wanted.value()) return std::shared_ptr<const TablePrinter>();
    auto crd_version = served_crd_version(registry_, store_, *t.type);
    return std::make_shared<const TablePrinter>(*t.type, crd_version ? &*crd_version : nullptr, *wanted.value());
  }

  HttpResponse get(const Target& t) {
    auto printer = table_printer_for(t);
    if (!printer) return error_response(printer.error());
    auto object = store_.get(*t.type, t.namespace_name, t.name);
    if (!object) return error_response(object.error());
    if (*printer) return HttpResponse{200, (*printer)->content_type(), (*printer)->one(**object), nullptr};
    return ok_json((*object)->json);
  }

  // The body of a create or update: JSON or YAML, of this kind.
  ApiResult<json> object_body(const Target& t) const {
    auto ct = base_content_type(request_.content_type);
    BodyFormat format = BodyFormat::json;
    if (ct == "application/yaml") format = BodyFormat::yaml;
    else if (ct == "application/vnd.kubernetes.protobuf") format = BodyFormat::protobuf;
    else if (!ct.empty() && ct != "application/json") return ApiError::unsupported_media_type(ct);
    auto body = format == BodyFormat::protobuf ? decode_protobuf(request_.body)
                                               : decode_body(request_.body, format, limits_);
    if (body && format == BodyFormat::protobuf)
      if (auto bad = check_object_limits(*body, limits_)) return *bad;
    if (!body) return body;
    return checked_object(t, std::move(body).value());
  }

  ApiResult<json> checked_object(const Target& t, json body) const {
    if (!body.is_object()) return ApiError::bad_request("the request body must be a JSON object, not " + std::string(body.type_name()));
    if (auto kind = body.find("kind"); kind != body.end() && !(kind->is_string() && (*kind == t.type->kind || *kind == "")))
      return ApiError::bad_request("the kind in the body (" + kind->dump() + ") does not match the resource's kind (" +
                                   t.type->kind + ")");
    if (auto av = body.find("apiVersion"); av != body.end() && !(av->is_string() && (*av == t.type->api_version() || *av == "")))
      return ApiError::bad_request("the API version in the data (" + av->dump() +
                                   ") does not match the expected API version (" + t.type->api_version() + ")");
    if (body.contains("metadata") && !body["metadata"].is_object())
      return ApiError::bad_request("metadata must be an object");
    if (t.type->namespaced && body.contains("metadata")) {
      const auto& ns = body["metadata"].value("namespace", json());
      if (!ns.is_null() && !(ns.is_string() && (ns == "" || ns == t.namespace_name)))
        return ApiError::bad_request("the namespace of the provided object does not match the namespace sent on the request");
    }
    if (!t.name.empty() && body.contains("metadata")) {
      const auto& name = body["metadata"].value("name", json());
      if (!name.is_null() && !(name.is_string() && (name == "" || name == t.name)))
        return ApiError::bad_request("the name of the object (" + name.dump() + ") does not match the name on the URL (" +
                                     t.name + ")");
    }
    return body;
  }

  HttpResponse create(const Target& t) {
    auto dry = dry_run_of(query_);
    if (!dry) return error_response(dry.error());
    auto body = object_body(t);
    if (!body) return error_response(body.error());
    if (!body->contains("metadata")) (*body)["metadata"] = json::object();
    prepare_for_create(*t.type, *body);
    if (auto refused = admit(registry_, *t.type, *body, budget_)) return error_response(*refused);
    auto created = store_.create(*t.type, t.namespace_name, std::move(body).value(), dry.value());
    if (!created) return error_response(created.error());
    if (!dry.value()) after_write(*created->object);
    return ok_json(created->object->json, 201);
  }

  // A stored CRD serves its kind (admit() checked that it can).
  void after_write(const StoredObject& object) {
    (void)follow_crd(registry_, EventType::modified, object);
  }

  // A deleted CRD: stop serving its kind, then delete its objects.
  void after_delete(const StoredObject& object) {
    auto retired = follow_crd(registry_, EventType::deleted, object);
    if (retired && retired.value()) delete_custom_objects(store_, *retired.value());
  }

  // Status subresource rules (§A6.2): the main resource keeps the stored status; /status changes only status.
  void keep_status_rules(const Target& t, const json& current, json& result) const {
    if (!t.type->status_subresource) return;
    if (t.subresource.empty()) {
      if (current.contains("status")) result["status"] = current["status"]; else result.erase("status");
    } else {
      json only_status = current;
      if (result.contains("status")) only_status["status"] = result["status"]; else only_status.erase("status");
      // The write's resourceVersion precondition and managedFields (an apply to /status records its fields).
      if (result.contains("metadata") && result["metadata"].is_object())
        for (const char* kept : {"resourceVersion", "managedFields"})
          if (result["metadata"].contains(kept)) only_status["metadata"][kept] = result["metadata"][kept];
      result = std::move(only_status);
    }
  }

  HttpResponse update(const Target& t) {
    auto dry = dry_run_of(query_);
    if (!dry) return error_response(dry.error());
    auto body = object_body(t);
    if (!body) return error_response(body.error());
    json replacement = std::move(body).value();
    auto written = store_.write(
        *t.type, t.namespace_name, t.name,
        [&](const json* current) -> ApiResult<json> {
          json result = replacement;
          if (!result.contains("metadata")) result["metadata"] = json::object();
          keep_status_rules(t, *current, result);
          if (auto refused = admit(registry_, *t.type, result, budget_)) return *refused;
          return result;
        },
        false, dry.value());
    if (!written) return error_response(written.error());
    if (!dry.value()) after_write(*written->object);
    return ok_json(written->object->json);
  }

  HttpResponse patch(const Target& t) {
    auto dry = dry_run_of(query_);
    if (!dry) return error_response(dry.error());
    auto ct = base_content_type(request_.content_type);
    enum class Kind { merge, strategic, json_patch, apply } kind;
    if (ct == "application/merge-patch+json") kind = Kind::merge;
    else if (ct == "application/strategic-merge-patch+json") kind = Kind::strategic;
    else if (ct == "application/json-patch+json") kind = Kind::json_patch;
    else if (ct == "application/apply-patch+yaml") kind = Kind::apply;
    else return error_response(ApiError{415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                        "accepted media types include: application/json-patch+json, "
                                        "application/merge-patch+json, application/apply-patch+yaml" +
                                        std::string(t.type->builtin ? ", application/strategic-merge-patch+json" : ""),
                                        {}, {}, {}, {}, {}});
    if (kind == Kind::strategic && !t.type->builtin)
      return error_response(ApiError{415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                     "strategic merge patch is not supported for custom resources; use "
                                     "application/merge-patch+json", {}, {}, {}, {}, {}});
    const std::string manager = param(query_, "fieldManager");
    if (kind == Kind::apply && manager.empty())
      return error_response(ApiError::invalid("meta.k8s.io", "PatchOptions", "",
                                              {{"FieldValueRequired", "Required value: is required for apply patch", "fieldManager"}}));
    auto document =
        decode_body(request_.body, kind == Kind::apply ? BodyFormat::yaml : BodyFormat::json, limits_);
    if (!document) return error_response(document.error());
    json patch_document = std::move(document).value();
    if (kind == Kind::apply) {
      auto checked = checked_object(t, std::move(patch_document));
      if (!checked) return error_response(checked.error());
      patch_document = std::move(checked).value();
      if (auto refused = managed_fields_refused(patch_document)) return error_response(*refused);
    }
    const Applier applier{manager, t.type->api_version(), t.subresource, t.type->builtin, t.type->status_subresource};
    // GuaranteedUpdate (kube-apiserver): read the object, patch it outside the store
    // lock, then write it only if it is still at the version read; retry on a race.
    auto patched = [&](const json& current) -> ApiResult<json> {
      json result = current;
      std::optional<ApiError> failed;
      switch (kind) {
        case Kind::merge:
          failed = apply_merge_patch(result, patch_document, budget_);
          break;
        case Kind::strategic:
          failed = apply_strategic_merge_patch(result, patch_document, budget_);
          break;
        case Kind::json_patch:
          failed = apply_json_patch(result, patch_document, limits_, budget_);
          break;
        case Kind::apply:
          failed = apply_configuration(result, patch_document, applier, now_rfc3339(), budget_);
          break;
      }
      if (failed) return *failed;
      if (!result.is_object() || !result.contains("metadata") || !result["metadata"].is_object())
        return ApiError::bad_request("the patch removes the object's metadata");
      if (auto bad = check_object_limits(result, limits_)) return *bad;
      keep_status_rules(t, current, result);
      if (auto refused = admit(registry_, *t.type, result, budget_)) return *refused;
      return result;
    };
    const bool create_if_absent = kind == Kind::apply && t.subresource.empty();
    for (int attempt = 0;; ++attempt) {
      auto stored = store_.get(*t.type, t.namespace_name, t.name);
      if (!stored && (!create_if_absent || stored.error().code != 404)) return error_response(stored.error());
      std::optional<json> result;
      std::string read_rv;
      if (stored) {
        // The patch works on the stored object too: its size buys time once, not per retry.
        if (attempt == 0) budget_.allow_bytes((*stored)->json.size());
        auto next = patched(json::parse((*stored)->json));
        if (!next) return error_response(next.error());
        result = std::move(next).value();
        read_rv = format_resource_version((*stored)->resource_version);
      }
      bool raced = false;
      auto written = store_.write(
          *t.type, t.namespace_name, t.name,
          [&](const json* current) -> ApiResult<json> {
            auto current_rv = current ? current->at("metadata").value("resourceVersion", "") : std::string();
            if (current_rv != read_rv) {  // created, changed or deleted since it was read
              raced = true;
              return ApiError::conflict(t.type->group, t.type->plural, t.name,
                                        "the object changed while it was patched");
            }
            if (current) return *result;
            json fresh = json::object();  // apply to an absent object creates it
            if (auto failed = apply_configuration(fresh, patch_document, applier, now_rfc3339(), budget_))
              return *failed;
            fresh["metadata"]["name"] = t.name;
            prepare_for_create(*t.type, fresh);
            if (auto refused = admit(registry_, *t.type, fresh, budget_)) return *refused;
            return fresh;
          },
          create_if_absent, dry.value());
      if (raced && attempt < max_patch_attempts) continue;
      if (!written) return error_response(written.error());
      if (!dry.value()) after_write(*written->object);
      return ok_json(written->object->json, written->created ? 201 : 200);
    }
  }

  std::string success_status(const StoredObject& object) const {
    json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"},
                   {"details", {{"name", object.name}, {"group", object.type->group}, {"kind", object.type->plural},
                                {"uid", object.uid}}}};
    return status.dump();
  }

  HttpResponse remove(const Target& t) {
    auto dry = dry_run_of(query_);
    if (!dry) return error_response(dry.error());
    if (is_namespaces(*t.type) && is_protected_namespace(t.name))
      return error_response(namespace_not_deletable(t.name));
    auto options = delete_options();
    if (!options) return error_response(options.error());
    const bool dry_run = dry.value() || options->dry_run;
    auto removed = store_.remove(*t.type, t.namespace_name, t.name, options->preconditions, dry_run);
    if (!removed) return error_response(removed.error());
    if (!dry_run) after_delete(**removed);
    if (t.type->delete_returns_object) return ok_json((*removed)->json);
    return ok_json(success_status(**removed));
  }

  // A DELETE's body, read as DeleteOptions (defaults when empty).
  ApiResult<DeleteOptions> delete_options() const {
    if (request_.body.empty()) return DeleteOptions{};
    auto body = decode_body(request_.body, BodyFormat::json, limits_);
    if (!body) return std::move(body).error();
    return parse_delete_options(*body);
  }

  HttpResponse delete_collection(const Target& t) {
    auto query_dry = dry_run_of(query_);
    if (!query_dry) return error_response(query_dry.error());
    auto options = delete_options();
    if (!options) return error_response(options.error());
    const bool dry_run = query_dry.value() || options->dry_run;
    auto filter = filter_for(t);
    if (!filter) return error_response(filter.error());
    Store::ListQuery q;
    q.namespace_name = t.namespace_name;
    const ObjectFilter& f = filter.value();
    q.filter = [&f](const StoredObject& o) { return f.matches(o); };
    auto page = store_.list(*t.type, q);
    if (!page) return error_response(page.error());
    std::string body = "{\"kind\":\"" + t.type->list_kind() + "\",\"apiVersion\":\"" + t.type->api_version() +
                       "\",\"metadata\":{},\"items\":[";
    bool first = true;
    for (const auto& object : page->items) {
      if (is_namespaces(*t.type) && is_protected_namespace(object->name)) continue;
      auto removed = store_.remove(*t.type, object->namespace_name, object->name, {}, dry_run);
      if (!removed) continue;  // deleted concurrently
      if (!dry_run) after_delete(**removed);
      if (!first) body += ',';
      first = false;
      append_list_item(body, **removed);
    }
    body += "]}";
    return ok_json(std::move(body));
  }

  ResourceRegistry& registry_;
  Storage& store_;
  const ObjectLimits& limits_;
  const HttpRequest& request_;
  Query query_;
  WorkBudget budget_;  // this request's CPU time in the patch engines and validation
};

}  // namespace

std::size_t ListBody::size() const {
  std::size_t total = head.size() + tail.size() + (items.empty() ? 0 : items.size() - 1);
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto [first, second] = item_pieces(i);
    total += first.size() + second.size();
  }
  return total;
}

std::string ListBody::render() const {
  std::string out;
  out.reserve(size());
  out += head;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    auto [first, second] = item_pieces(i);
    out.append(first).append(second);
  }
  out += tail;
  return out;
}

HttpResponse error_response(const ApiError& error) {
  return HttpResponse{error.code, "application/json", error.to_status_json(), nullptr};
}

ApiReply Api::handle(const HttpRequest& request, const std::string& server_address) const {
  try {
    return route(request, server_address);
  } catch (const std::exception& e) {
    return error_response(ApiError::internal(std::string("internal error while serving the request: ") + e.what()));
  }
}

ApiReply Api::route(const HttpRequest& request, const std::string& server_address) const {
  auto question = request.target.find('?');
  std::string_view path(request.target.data(), question == std::string::npos ? request.target.size() : question);
  Query query = question == std::string::npos ? Query{} : parse_query(std::string_view(request.target).substr(question + 1));
  auto parts = split_path(path);
  bool is_get = request.method == "GET";
  auto discovery = [&](std::optional<std::string> body) -> ApiReply {
    if (!body) return error_response(ApiError::path_not_found());
    if (!is_get) return error_response(ApiError::method_not_allowed());
    return ok_json(std::move(*body));
  };
  if (parts.empty()) return discovery(std::nullopt);
  const auto& root = parts[0];
  if (parts.size() == 1 && (root == "healthz" || root == "livez" || root == "readyz"))
    return HttpResponse{200, "text/plain; charset=utf-8", "ok", nullptr};
  if (root == "version" && parts.size() == 1) return discovery(version_json());
  if (root == "openapi") {
    if (parts.size() == 2 && parts[1] == "v3") return discovery(openapi_root_json(registry_));
    if (parts.size() == 4 && parts[1] == "v3" && parts[2] == "api")
      return discovery(openapi_group_version_json(registry_, "", parts[3]));
    if (parts.size() == 5 && parts[1] == "v3" && parts[2] == "apis")
      return discovery(openapi_group_version_json(registry_, parts[3], parts[4]));
    return discovery(std::nullopt);
  }
  if (root != "api" && root != "apis") return discovery(std::nullopt);
  bool core = root == "api";
  std::string aggregated_version;
  if (parts.size() == 1) {
    if (!is_get) return error_response(ApiError::method_not_allowed());
    if (wants_aggregated_discovery(request.accept, aggregated_version))
      return HttpResponse{200, aggregated_content_type(aggregated_version),
                          aggregated_discovery_json(registry_, core, aggregated_version), nullptr};
    return ok_json(core ? api_versions_json(server_address) : api_group_list_json(registry_));
  }
  std::string group = core ? "" : parts[1];
  if (!core && parts.size() == 2) return discovery(api_group_json(registry_, group));
  std::size_t prefix = core ? 2 : 3;
  std::string version = parts[prefix - 1];
  if (parts.size() == prefix) return discovery(api_resource_list_json(registry_, group, version));

  std::vector<std::string> rest(parts.begin() + static_cast<std::ptrdiff_t>(prefix), parts.end());
  Target t;
  auto find = [&](const std::string& plural) { return registry_.find(group, version, plural); };
  // /namespaces/{ns}/{resource}[/{name}[/{sub}]] unless {resource} is not served, in which
  // case it is the namespace's own subresource (/namespaces/{name}/status).
  if (rest.size() >= 3 && rest[0] == "namespaces" && find(rest[2]) && find(rest[2])->namespaced) {
    if (rest.size() > 5) return discovery(std::nullopt);
    t.type = find(rest[2]);
    t.namespace_name = rest[1];
    if (rest.size() >= 4) t.name = rest[3];
    if (rest.size() == 5) t.subresource = rest[4];
  } else {
    if (rest.size() > 3) return discovery(std::nullopt);
    t.type = find(rest[0]);
    if (!t.type) return discovery(std::nullopt);
    if (rest.size() >= 2) {
      if (t.type->namespaced) return discovery(std::nullopt);  // a namespaced item needs its namespace
      t.name = rest[1];
    }
    if (rest.size() == 3) t.subresource = rest[2];
  }
  RequestHandler handler(registry_, store_, limits_, request, std::move(query));
  return handler.dispatch(t);
}

}  // namespace kinformer::apiserver
