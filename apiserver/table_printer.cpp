#include "apiserver/table_printer.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "apiserver/crd.hpp"
#include "apiserver/resource_version.hpp"

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// One Accept alternative: what it asks for, if this server can answer it.
enum class Wants { plain_json, table, unservable };

Wants parse_alternative(std::string_view alternative, std::string& table_version) {
  std::string media;
  std::string as, group, version;
  std::size_t start = 0;
  bool first = true;
  while (start <= alternative.size()) {
    auto semi = alternative.find(';', start);
    auto part = trimmed(alternative.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start));
    if (first) {
      media = lower(part);
      first = false;
    } else if (auto eq = part.find('='); eq != std::string_view::npos) {
      auto key = lower(trimmed(part.substr(0, eq)));
      auto value = std::string(trimmed(part.substr(eq + 1)));
      if (key == "as") as = value;
      else if (key == "g") group = value;
      else if (key == "v") version = value;
    }
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  if (media != "application/json" && media != "*/*" && media != "application/*") return Wants::unservable;
  if (as.empty()) return Wants::plain_json;
  if (as == "Table" && group == "meta.k8s.io" && (version == "v1" || version == "v1beta1")) {
    table_version = version;
    return Wants::table;
  }
  return Wants::unservable;
}

TableColumn name_column() { return {"Name", "string", "name", "The object's name, unique within its namespace.", 0}; }

std::string string_field(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A cell of an additionalPrinterColumn from the value its jsonPath selected.
json custom_cell(const TableColumn& column, const json& value, TableClock::time_point now) {
  const auto& type = column.type;
  if (type == "string") {
    if (value.is_string()) return value;
    if (value.is_null()) return nullptr;
    return value.dump();  // numbers, booleans, objects and lists as their JSON text
  }
  if (type == "integer") {
    if (value.is_number_integer()) return value;
    if (value.is_number_float()) return static_cast<std::int64_t>(value.get<double>());
    return nullptr;
  }
  if (type == "number") return value.is_number() ? value : json(nullptr);
  if (type == "boolean") return value.is_boolean() ? value : json(nullptr);
  if (type == "date") return value.is_string() ? json(age_of(value, now)) : json(nullptr);
  return value;
}

}  // namespace

ApiResult<std::optional<TableRequest>> table_request(std::string_view accept, std::string_view include_object) {
  std::optional<TableRequest> wanted;
  std::size_t start = 0;
  while (start < accept.size()) {
    auto comma = accept.find(',', start);
    auto alternative = accept.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::string version;
    auto wants = parse_alternative(alternative, version);
    if (wants == Wants::plain_json) break;
    if (wants == Wants::table) {
      wanted = TableRequest{version, TableRequest::Include::metadata};
      break;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (!wanted) return std::optional<TableRequest>{};
  if (include_object == "None") wanted->include = TableRequest::Include::none;
  else if (include_object == "Object") wanted->include = TableRequest::Include::object;
  else if (include_object.empty() || include_object == "Metadata") wanted->include = TableRequest::Include::metadata;
  else
    return ApiError::bad_request("includeObject \"" + std::string(include_object) +
                                 "\" is not supported: use None, Object or Metadata");
  return wanted;
}

TablePrinter::TablePrinter(const ResourceType& type, const json* crd_version, TableRequest request)
    : request_(std::move(request)), builtin_(builtin_printer(type)) {
  if (builtin_) {
    columns_ = builtin_->columns;
    return;
  }
  custom_ = !type.builtin && !is_crd_type(type);
  if (!custom_) {  // kube-apiserver's default table convertor
    columns_ = {name_column(), {"Created At", "date", "", "When the object was created.", 0}};
    return;
  }
  if (crd_version) {
    auto declared = crd_version->find("additionalPrinterColumns");
    if (declared != crd_version->end() && declared->is_array())
      for (const auto& c : *declared) {
        if (!c.is_object()) continue;
        CustomColumn column;
        column.definition = {string_field(c, "name"), string_field(c, "type"), string_field(c, "format"),
                             string_field(c, "description"), 0};
        if (auto p = c.find("priority"); p != c.end() && p->is_number_integer()) column.definition.priority = p->get<int>();
        if (auto path = JsonPath::parse(string_field(c, "jsonPath"))) column.path = std::move(path).value();
        custom_columns_.push_back(std::move(column));
      }
  }
  if (custom_columns_.empty())  // kube-apiserver's default for a CRD that declares none
    custom_columns_.push_back({{"Age", "date", "", "The time since the object was created.", 0},
                               JsonPath::parse(".metadata.creationTimestamp").value()});
  columns_.push_back(name_column());
  for (const auto& c : custom_columns_) columns_.push_back(c.definition);
}

std::string TablePrinter::content_type() const {
  return "application/json;as=Table;v=" + request_.version + ";g=meta.k8s.io";
}

json TablePrinter::row(const json& object, TableClock::time_point now) const {
  json out;
  if (builtin_) {
    out = builtin_->row(object, now);
  } else {
    const json empty = json::object();
    const json& meta = object.is_object() && object.contains("metadata") && object["metadata"].is_object() ? object["metadata"] : empty;
    json cells = json::array({string_field(meta, "name")});
    if (!custom_) {
      cells.push_back(string_field(meta, "creationTimestamp"));
    } else {
      for (const auto& c : custom_columns_) {
        const json* value = c.path ? c.path->first(object) : nullptr;
        cells.push_back(value ? custom_cell(c.definition, *value, now) : json(nullptr));
      }
    }
    out = {{"cells", std::move(cells)}};
  }
  switch (request_.include) {
    case TableRequest::Include::none:
      break;
    case TableRequest::Include::object:
      out["object"] = object;
      break;
    case TableRequest::Include::metadata:
      out["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/" + request_.version},
                       {"metadata", object.is_object() && object.contains("metadata") ? object["metadata"] : json::object()}};
      break;
  }
  return out;
}

json TablePrinter::table(json rows, json metadata, bool with_columns) const {
  json definitions = json::array();
  if (with_columns)
    for (const auto& c : columns_)
      definitions.push_back({{"name", c.name},
                             {"type", c.type},
                             {"format", c.format},
                             {"description", c.description},
                             {"priority", c.priority}});
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/" + request_.version},
          {"metadata", std::move(metadata)},
          {"columnDefinitions", std::move(definitions)},
          {"rows", std::move(rows)}};
}

std::string TablePrinter::list(const std::vector<StoredPtr>& items, const TableListMeta& meta,
                               TableClock::time_point now) const {
  json rows = json::array();
  for (const auto& item : items) rows.push_back(row(json::parse(item->json, nullptr, false), now));
  json metadata = {{"resourceVersion", format_resource_version(meta.resource_version)}};
  if (!meta.continue_token.empty()) metadata["continue"] = meta.continue_token;
  if (meta.remaining) metadata["remainingItemCount"] = *meta.remaining;
  return table(std::move(rows), std::move(metadata), true).dump();
}

std::string TablePrinter::one(const StoredObject& object, TableClock::time_point now) const {
  return table(json::array({row(json::parse(object.json, nullptr, false), now)}),
               {{"resourceVersion", format_resource_version(object.resource_version)}}, true)
      .dump();
}

std::string TablePrinter::watch_line(std::string_view line, bool& columns_sent, TableClock::time_point now) const {
  auto event = json::parse(line, nullptr, false);
  if (!event.is_object() || !event.contains("object") || !event["object"].is_object()) return std::string(line);
  const auto type = string_field(event, "type");
  if (type == "ERROR") return std::string(line);
  const json& object = event["object"];
  std::string rv;
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) rv = string_field(*meta, "resourceVersion");
  json rows = json::array();
  bool with_columns = false;
  if (type != "BOOKMARK") {
    rows.push_back(row(object, now));
    with_columns = !columns_sent;
    columns_sent = true;
  }
  event["object"] = table(std::move(rows), {{"resourceVersion", rv}}, with_columns);
  return event.dump() + "\n";
}

std::function<std::string(const std::string&)> table_watch_rewriter(std::shared_ptr<const TablePrinter> printer) {
  auto columns_sent = std::make_shared<bool>(false);
  return [printer = std::move(printer), columns_sent](const std::string& line) {
    // This runs on the watch's connection, outside Api::handle's catch: a failure
    // (std::bad_alloc) sends the event as plain JSON rather than ending the server.
    try {
      return printer->watch_line(line, *columns_sent);
    } catch (const std::exception&) {
      return line;
    }
  };
}

}  // namespace kinformer::apiserver
