#include "apiserver/json_path.hpp"

#include <cctype>

#include <nlohmann/json.hpp>

namespace kinformer::apiserver {

using nlohmann::json;

namespace {

Error bad(std::string_view expression, std::size_t at, const std::string& why) {
  return {Errc::decode_failed,
          "JSONPath \"" + std::string(expression) + "\" at " + std::to_string(at) + ": " + why};
}

bool name_char(char c) { return c != '.' && c != '[' && c != ']' && c != '}' && c != ' '; }

// A name after '.' or "@.": letters, digits, '-', '_', '/' and the like, up to the next separator.
std::size_t read_name(std::string_view s, std::size_t i, std::string& out) {
  auto start = i;
  while (i < s.size() && name_char(s[i]) && std::string_view("=!<>)").find(s[i]) == std::string_view::npos) ++i;
  out = std::string(s.substr(start, i - start));
  return i;
}

}  // namespace

Result<JsonPath> JsonPath::parse(std::string_view expression) {
  JsonPath out;
  out.text_ = std::string(expression);
  std::string_view s = expression;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  std::size_t i = 0;
  if (i < s.size() && s[i] == '$') ++i;
  if (i == s.size()) return bad(expression, i, "the path is empty");
  while (i < s.size()) {
    if (s[i] == '.') {
      ++i;
      if (i < s.size() && s[i] == '.') return bad(expression, i, "recursive descent (..) is not supported");
      if (i < s.size() && s[i] == '*') {
        out.steps_.emplace_back(Wildcard{});
        ++i;
        continue;
      }
      std::string name;
      i = read_name(s, i, name);
      if (name.empty()) return bad(expression, i, "a field name is expected after '.'");
      out.steps_.emplace_back(Field{std::move(name)});
      continue;
    }
    if (s[i] != '[') return bad(expression, i, std::string("unexpected '") + s[i] + "'");
    auto close = s.find(']', i);
    if (close == std::string_view::npos) return bad(expression, i, "'[' is not closed");
    std::string_view inside = s.substr(i + 1, close - i - 1);
    if (inside == "*") {
      out.steps_.emplace_back(Wildcard{});
    } else if (inside.size() >= 2 && (inside.front() == '\'' || inside.front() == '"') && inside.back() == inside.front()) {
      out.steps_.emplace_back(Field{std::string(inside.substr(1, inside.size() - 2))});
    } else if (inside.size() >= 4 && inside.substr(0, 2) == "?(" && inside.back() == ')') {
      std::string_view f = inside.substr(2, inside.size() - 3);
      if (f.substr(0, 2) != "@.") return bad(expression, i, "a filter must start with @.");
      Filter filter;
      std::size_t j = 1;
      while (j < f.size() && f[j] == '.') {
        std::string name;
        j = read_name(f, j + 1, name);
        if (name.empty()) return bad(expression, i, "a field name is expected in the filter");
        filter.path.push_back(std::move(name));
      }
      while (j < f.size() && f[j] == ' ') ++j;
      if (j < f.size()) {
        if (f.substr(j, 2) == "==") filter.op = Filter::Op::equal;
        else if (f.substr(j, 2) == "!=") filter.op = Filter::Op::not_equal;
        else return bad(expression, i, "only == and != are supported in filters");
        std::string_view literal = f.substr(j + 2);
        while (!literal.empty() && literal.front() == ' ') literal.remove_prefix(1);
        while (!literal.empty() && literal.back() == ' ') literal.remove_suffix(1);
        if (literal.size() >= 2 && literal.front() == '\'' && literal.back() == '\'')
          filter.literal = json(std::string(literal.substr(1, literal.size() - 2))).dump();
        else if (json::accept(literal))
          filter.literal = std::string(literal);
        else
          return bad(expression, i, "the filter's value must be a string, number or boolean");
      }
      out.steps_.emplace_back(std::move(filter));
    } else {
      long long index = 0;
      std::size_t k = 0;
      bool negative = !inside.empty() && inside[0] == '-';
      if (negative) ++k;
      if (k == inside.size()) return bad(expression, i, "an index, a quoted name, * or a filter is expected in []");
      for (; k < inside.size(); ++k) {
        if (!std::isdigit(static_cast<unsigned char>(inside[k])) || index > 1'000'000'000)
          return bad(expression, i, "\"" + std::string(inside) + "\" is not supported in []");
        index = index * 10 + (inside[k] - '0');
      }
      out.steps_.emplace_back(Index{negative ? -index : index});
    }
    i = close + 1;
  }
  return out;
}

bool JsonPath::filter_matches(const Filter& filter, const json& element) {
  const json* at = &element;
  for (const auto& name : filter.path) {
    if (!at->is_object()) return filter.op == Filter::Op::not_equal;
    auto it = at->find(name);
    if (it == at->end()) return filter.op == Filter::Op::not_equal;
    at = &*it;
  }
  if (filter.op == Filter::Op::exists) return true;
  bool equal = *at == json::parse(filter.literal);
  return filter.op == Filter::Op::equal ? equal : !equal;
}

std::vector<const json*> JsonPath::find(const json& document) const {
  std::vector<const json*> current{&document};
  for (const auto& step : steps_) {
    std::vector<const json*> next;
    for (const json* node : current) {
      if (const auto* field = std::get_if<Field>(&step)) {
        if (!node->is_object()) continue;
        if (auto it = node->find(field->name); it != node->end()) next.push_back(&*it);
      } else if (const auto* index = std::get_if<Index>(&step)) {
        if (!node->is_array()) continue;
        auto size = static_cast<long long>(node->size());
        auto i = index->index < 0 ? size + index->index : index->index;
        if (i >= 0 && i < size) next.push_back(&(*node)[static_cast<std::size_t>(i)]);
      } else if (std::holds_alternative<Wildcard>(step)) {
        if (node->is_array() || node->is_object())
          for (const auto& child : *node) next.push_back(&child);
      } else {
        const auto& filter = std::get<Filter>(step);
        if (!node->is_array()) continue;
        for (const auto& element : *node)
          if (filter_matches(filter, element)) next.push_back(&element);
      }
    }
    current = std::move(next);
    if (current.empty()) break;
  }
  return current;
}

const json* JsonPath::first(const json& document) const {
  auto all = find(document);
  return all.empty() ? nullptr : all.front();
}

Result<void> JsonPath::set(json& document, json value) const {
  json* at = &document;
  for (const auto& step : steps_) {
    const auto* field = std::get_if<Field>(&step);
    if (!field) return {Errc::decode_failed, "JSONPath \"" + text_ + "\" is not a path of field names"};
    if (at->is_null()) *at = json::object();
    if (!at->is_object())
      return {Errc::decode_failed, "JSONPath \"" + text_ + "\" passes through a " + at->type_name() + ", not an object"};
    at = &(*at)[field->name];
  }
  *at = std::move(value);
  return {};
}

}  // namespace kinformer::apiserver
