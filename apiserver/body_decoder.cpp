#include "apiserver/body_decoder.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

// Counts a YAML stream's documents, up to two, without building them. yaml-cpp 0.7's
// LoadAll loops forever, allocating a null document each time, when the parser reports a
// document without consuming a token (a body of a lone ",": yaml-cpp issue 1040), so
// decode_body() never calls it: a second document that starts where the first did means
// the parser is stuck.
class DocumentCounter final : public YAML::EventHandler {
 public:
  /// The number of documents (0, 1, or 2 for "two or more"); stuck() after it when the
  /// parser made no progress.
  int count(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    int documents = 0;
    while (documents < 2 && !stuck_ && parser.HandleNextDocument(*this)) ++documents;
    return documents;
  }
  bool stuck() const { return stuck_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    stuck_ = started_ && mark.pos == last_start_;
    started_ = true;
    last_start_ = mark.pos;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  bool started_ = false;
  bool stuck_ = false;
  int last_start_ = 0;
};

json plain_scalar(const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  char* end = nullptr;
  errno = 0;
  long long integer = std::strtoll(text.c_str(), &end, 10);
  if (end && *end == '\0' && errno == 0 && text.find_first_not_of("+-0123456789") == std::string::npos) return integer;
  if (text.find_first_not_of("+-0123456789.eE") == std::string::npos && text.find_first_of("0123456789") != std::string::npos) {
    double real = std::strtod(text.c_str(), &end);
    if (end && *end == '\0' && std::isfinite(real)) return real;
  }
  return text;
}

// Expands a YAML tree into JSON within `limits`: aliases share nodes in yaml-cpp, so a
// small document can expand exponentially ("billion laughs") or forever (an alias
// inside its own anchor). The depth bound stops cycles, the byte budget stops bombs.
class YamlExpander {
 public:
  explicit YamlExpander(const ObjectLimits& limits) : limits_(limits) {}

  ApiResult<json> expand(const YAML::Node& root) {
    json out = from_yaml(root, 1);
    if (too_deep_) return object_too_deep(limits_.max_depth);
    if (spent_ > limits_.max_bytes) return object_too_large(limits_.max_bytes);
    return out;
  }

 private:
  bool over_budget() const { return too_deep_ || spent_ > limits_.max_bytes; }

  json from_yaml(const YAML::Node& node, std::size_t depth) {
    if (depth > limits_.max_depth) {
      too_deep_ = true;
      return nullptr;
    }
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        spent_ += 4;
        return nullptr;
      case YAML::NodeType::Scalar:
        spent_ += node.Scalar().size() + 2;
        // "!" marks a quoted scalar: always a string
        return node.Tag() == "!" ? json(node.Scalar()) : plain_scalar(node.Scalar());
      case YAML::NodeType::Sequence: {
        json out = json::array();
        for (const auto& item : node) {
          spent_ += 1;
          if (over_budget()) break;
          out.push_back(from_yaml(item, depth + 1));
        }
        return out;
      }
      case YAML::NodeType::Map: {
        json out = json::object();
        for (const auto& entry : node) {
          auto key = entry.first.as<std::string>();
          spent_ += key.size() + 4;
          if (over_budget()) break;
          out[key] = from_yaml(entry.second, depth + 1);
        }
        return out;
      }
    }
    return nullptr;
  }

  const ObjectLimits& limits_;
  std::size_t spent_ = 0;  // estimated serialized bytes produced so far
  bool too_deep_ = false;
};

}  // namespace

ApiResult<json> decode_body(std::string_view body, BodyFormat format, const ObjectLimits& limits) {
  if (!text_nests_within(body, limits.max_depth))
    return ApiError::bad_request("the request body nests deeper than " + std::to_string(limits.max_depth) +
                                 " levels");
  if (!is_valid_utf8(body)) return ApiError::bad_request("the request body is not valid UTF-8");
  if (format == BodyFormat::json) {
    try {
      json document = json::parse(body.begin(), body.end());
      if (auto bad = check_object_limits(document, limits)) return *bad;
      return document;
    } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e400
      return ApiError::bad_request(std::string("the request body is not valid JSON: ") + e.what());
    }
  }
  if (format == BodyFormat::protobuf) return ApiError::internal("protobuf bodies go to decode_protobuf()");
  // A YAML body that is JSON (kubectl and client-go send apply configurations as JSON) is
  // read by the JSON parser: the same document, some fifty times faster than yaml-cpp,
  // whose cost on a 3 MB body would hold an I/O thread for seconds.
  if (auto first = body.find_first_not_of(" \t\r\n"); first != std::string_view::npos && body[first] == '{') {
    json document = json::parse(body.begin(), body.end(), nullptr, false);
    if (!document.is_discarded()) {
      if (auto bad = check_object_limits(document, limits)) return *bad;
      return document;
    }
  }
  try {
    const std::string text(body);
    DocumentCounter counter;
    const int documents = counter.count(text);
    if (counter.stuck()) return ApiError::bad_request("the request body is not valid YAML: no document can be read from it");
    if (documents != 1)
      return ApiError::bad_request(std::string("the request body must hold exactly one YAML document (found ") +
                                   (documents == 0 ? "none" : "more than one") + ")");
    auto document = YamlExpander(limits).expand(YAML::Load(text));
    if (!document) return document;
    if (auto bad = check_object_limits(*document, limits)) return *bad;
    return document;
  } catch (const YAML::Exception& e) {
    return ApiError::bad_request(std::string("the request body is not valid YAML: ") + e.what());
  }
}

}  // namespace kinformer::apiserver
