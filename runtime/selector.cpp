#include "runtime/selector.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kinformer {

namespace {

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A label name or value: ≤ 63 of [A-Za-z0-9._-], alphanumeric at both ends.
std::optional<std::string> qualified_name_problem(std::string_view s, bool allow_empty) {
  if (s.empty()) return allow_empty ? std::nullopt : std::optional<std::string>("must not be empty");
  if (s.size() > 63) return "must be no more than 63 characters";
  if (!is_alnum(s.front()) || !is_alnum(s.back())) return "must begin and end with an alphanumeric character";
  for (char c : s)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return std::string("must not contain '") + c + "'";
  return std::nullopt;
}

// A DNS-1123 subdomain: ≤ 253 of [a-z0-9.-], alphanumeric at both ends.
std::optional<std::string> dns_subdomain_problem(std::string_view s) {
  if (s.empty()) return "prefix must not be empty";
  if (s.size() > 253) return "prefix must be no more than 253 characters";
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return "prefix must begin and end with [a-z0-9]";
  for (char c : s)
    if (!lower_alnum(c) && c != '-' && c != '.') return std::string("prefix must not contain '") + c + "'";
  return std::nullopt;
}

std::optional<std::int64_t> parse_integer(std::string_view s) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// Splits label selector text into tokens: words, operators and punctuation.
class LabelLexer {
 public:
  explicit LabelLexer(std::string_view text) : text_(text) {}

  enum class Kind { end, word, equals, double_equals, not_equals, bang, open, close, comma, greater, less };
  struct Token {
    Kind kind = Kind::end;
    std::string_view text;
    std::size_t offset = 0;
  };

  Token next() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    const std::size_t start = pos_;
    if (pos_ >= text_.size()) return {Kind::end, {}, start};
    auto one = [&](Kind k) { ++pos_; return Token{k, text_.substr(start, 1), start}; };
    switch (text_[pos_]) {
      case ',': return one(Kind::comma);
      case '(': return one(Kind::open);
      case ')': return one(Kind::close);
      case '>': return one(Kind::greater);
      case '<': return one(Kind::less);
      case '=':
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') {
          pos_ += 2;
          return {Kind::double_equals, text_.substr(start, 2), start};
        }
        return one(Kind::equals);
      case '!':
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') {
          pos_ += 2;
          return {Kind::not_equals, text_.substr(start, 2), start};
        }
        return one(Kind::bang);
      default: break;
    }
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])) &&
           std::string_view(",()=!<>").find(text_[pos_]) == std::string_view::npos)
      ++pos_;
    return {Kind::word, text_.substr(start, pos_ - start), start};
  }

  Token peek() {
    const std::size_t saved = pos_;
    Token t = next();
    pos_ = saved;
    return t;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

class LabelParser {
 public:
  explicit LabelParser(std::string_view text) : text_(text), lexer_(text) {}

  Result<std::vector<LabelSelector::Requirement>> parse() {
    std::vector<LabelSelector::Requirement> out;
    if (lexer_.peek().kind == LabelLexer::Kind::end) return out;
    for (;;) {
      auto requirement = parse_requirement();
      if (!requirement) return std::move(requirement).error();
      out.push_back(std::move(requirement).value());
      auto sep = lexer_.next();
      if (sep.kind == LabelLexer::Kind::end) break;
      if (sep.kind != LabelLexer::Kind::comma) return fail(sep, "expected ',' or the end");
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    return out;
  }

 private:
  using Kind = LabelLexer::Kind;
  using Op = LabelSelector::Operator;

  Result<LabelSelector::Requirement> parse_requirement() {
    LabelSelector::Requirement r;
    auto t = lexer_.next();
    bool negated_existence = false;
    if (t.kind == Kind::bang) {
      negated_existence = true;
      t = lexer_.next();
    }
    if (t.kind != Kind::word) return fail(t, "expected a label key");
    if (auto problem = label_key_problem(t.text)) return fail(t, "invalid label key \"" + std::string(t.text) + "\": " + *problem);
    r.key = std::string(t.text);
    if (negated_existence) {
      r.op = Op::does_not_exist;
      return r;
    }
    auto op = lexer_.peek();
    switch (op.kind) {
      case Kind::end:
      case Kind::comma: r.op = Op::exists; return r;
      case Kind::equals:
      case Kind::double_equals:
      case Kind::not_equals: {
        lexer_.next();
        r.op = op.kind == Kind::not_equals ? Op::not_equals : Op::equals;
        auto value = single_value();
        if (!value) return std::move(value).error();
        r.values.push_back(std::move(value).value());
        return r;
      }
      case Kind::greater:
      case Kind::less: {
        lexer_.next();
        r.op = op.kind == Kind::greater ? Op::greater_than : Op::less_than;
        auto v = lexer_.next();
        if (v.kind != Kind::word || !parse_integer(v.text)) return fail(v, "expected an integer after '" + std::string(op.text) + "'");
        r.values.emplace_back(v.text);
        return r;
      }
      case Kind::word:
        if (op.text == "in" || op.text == "notin") {
          lexer_.next();
          r.op = op.text == "in" ? Op::in : Op::not_in;
          auto values = value_set();
          if (!values) return std::move(values).error();
          r.values = std::move(values).value();
          return r;
        }
        [[fallthrough]];
      default: return fail(op, "expected an operator (=, ==, !=, in, notin, >, <) after \"" + r.key + "\"");
    }
  }

  Result<std::string> single_value() {
    auto v = lexer_.peek();
    if (v.kind == Kind::end || v.kind == Kind::comma) return std::string();  // "key=" selects the empty value
    lexer_.next();
    if (v.kind != Kind::word) return fail(v, "expected a label value");
    if (auto problem = qualified_name_problem(v.text, true))
      return fail(v, "invalid label value \"" + std::string(v.text) + "\": " + *problem);
    return std::string(v.text);
  }

  Result<std::vector<std::string>> value_set() {
    auto open = lexer_.next();
    if (open.kind != Kind::open) return fail(open, "expected '(' to start a set of values");
    std::vector<std::string> values;
    for (;;) {
      auto v = lexer_.next();
      if (v.kind == Kind::close && values.empty()) return fail(v, "a set of values must not be empty");
      if (v.kind == Kind::word) {
        if (auto problem = qualified_name_problem(v.text, true))
          return fail(v, "invalid label value \"" + std::string(v.text) + "\": " + *problem);
        values.emplace_back(v.text);
        v = lexer_.next();
      } else if (v.kind == Kind::comma || v.kind == Kind::close) {
        values.emplace_back();  // an empty value between separators
      } else {
        return fail(v, "expected a value or ')'");
      }
      if (v.kind == Kind::close) break;
      if (v.kind != Kind::comma) return fail(v, "expected ',' or ')' in a set of values");
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
  }

  Error fail(const LabelLexer::Token& at, const std::string& reason) const {
    return Error{Errc::invalid_selector, "label selector \"" + std::string(text_) + "\": " + reason + " at position " +
                                             std::to_string(at.offset)};
  }

  std::string_view text_;
  LabelLexer lexer_;
};

bool contains(const std::vector<std::string>& sorted, std::string_view value) {
  return std::binary_search(sorted.begin(), sorted.end(), value, std::less<>());
}

}  // namespace

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  auto requirements = LabelParser(text).parse();
  if (!requirements) return std::move(requirements).error();
  LabelSelector selector;
  selector.requirements_ = std::move(requirements).value();
  return selector;
}

bool LabelSelector::matches(const LabelGetter& label) const {
  for (const auto& r : requirements_) {
    const auto value = label(r.key);
    switch (r.op) {
      case Operator::equals: if (!value || *value != r.values.front()) return false; break;
      case Operator::not_equals: if (value && *value == r.values.front()) return false; break;
      case Operator::in: if (!value || !contains(r.values, *value)) return false; break;
      case Operator::not_in: if (value && contains(r.values, *value)) return false; break;
      case Operator::exists: if (!value) return false; break;
      case Operator::does_not_exist: if (value) return false; break;
      case Operator::greater_than:
      case Operator::less_than: {
        if (!value) return false;
        const auto have = parse_integer(*value);
        const auto want = parse_integer(r.values.front());
        if (!have || !want) return false;
        if (r.op == Operator::greater_than ? !(*have > *want) : !(*have < *want)) return false;
        break;
      }
    }
  }
  return true;
}

bool LabelSelector::matches(const std::map<std::string, std::string>& labels) const {
  return matches([&labels](std::string_view key) -> std::optional<std::string_view> {
    auto it = labels.find(std::string(key));
    if (it == labels.end()) return std::nullopt;
    return std::string_view(it->second);
  });
}

bool LabelSelector::matches(const Object& object) const {
  return matches([&object](std::string_view key) { return object.label(key); });
}

std::string LabelSelector::to_string() const {
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty()) out += ',';
    auto set = [&r] {
      // {""} prints as "(,)": "()" does not parse (an empty set is an error), and
      // "(,)" reads back as {""} here and in Kubernetes (found by fuzz_selector, issue 19).
      if (r.values.size() == 1 && r.values.front().empty()) return std::string(" (,)");
      std::string s = " (";
      for (std::size_t i = 0; i < r.values.size(); ++i) s += (i ? "," : "") + r.values[i];
      return s + ")";
    };
    switch (r.op) {
      case Operator::equals: out += r.key + "=" + r.values.front(); break;
      case Operator::not_equals: out += r.key + "!=" + r.values.front(); break;
      case Operator::in: out += r.key + " in" + set(); break;
      case Operator::not_in: out += r.key + " notin" + set(); break;
      case Operator::exists: out += r.key; break;
      case Operator::does_not_exist: out += "!" + r.key; break;
      case Operator::greater_than: out += r.key + ">" + r.values.front(); break;
      case Operator::less_than: out += r.key + "<" + r.values.front(); break;
    }
  }
  return out;
}

// -- FieldSelector --

namespace {

// Splits on unescaped `sep`, keeping escapes in the parts.
std::vector<std::string_view> split_unescaped(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string escape_field_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

Result<FieldSelector> FieldSelector::parse(std::string_view text) {
  FieldSelector selector;
  if (trim(text).empty()) return selector;
  auto fail = [&text](std::string_view part, const std::string& reason) {
    return Error{Errc::invalid_selector,
                 "field selector \"" + std::string(text) + "\": " + reason + " in \"" + std::string(part) + "\""};
  };
  for (std::string_view raw : split_unescaped(text, ',')) {
    std::string_view part = trim(raw);
    if (part.empty()) return fail(raw, "empty requirement");
    // the operator is the first unescaped '=', '==' or '!='
    std::size_t op = std::string_view::npos;
    for (std::size_t i = 0; i < part.size(); ++i) {
      if (part[i] == '\\') {
        ++i;
      } else if (part[i] == '=' || (part[i] == '!' && i + 1 < part.size() && part[i + 1] == '=')) {
        op = i;
        break;
      }
    }
    if (op == std::string_view::npos) return fail(part, "expected field=value, field==value or field!=value");
    Requirement r;
    r.field = std::string(trim(part.substr(0, op)));
    std::size_t value_start = op + 1;
    if (part[op] == '!') {
      r.negated = true;
      value_start = op + 2;
    } else if (op + 1 < part.size() && part[op + 1] == '=') {
      value_start = op + 2;
    }
    if (r.field.empty()) return fail(part, "missing field name");
    for (char c : r.field)
      if (!is_alnum(c) && c != '.' && c != '_' && c != '-' && c != '/')
        return fail(part, std::string("invalid character '") + c + "' in field name");
    std::string_view escaped = trim(part.substr(value_start));
    for (std::size_t i = 0; i < escaped.size(); ++i) {
      char c = escaped[i];
      if (c == '\\') {
        if (i + 1 >= escaped.size() || std::string_view("\\,=").find(escaped[i + 1]) == std::string_view::npos)
          return fail(part, "invalid escape sequence");
        c = escaped[++i];
      } else if (c == '=' || c == '!') {
        return fail(part, std::string("unescaped '") + c + "' in value");
      }
      r.value += c;
    }
    if (std::find(selector.fields_.begin(), selector.fields_.end(), r.field) == selector.fields_.end())
      selector.fields_.push_back(r.field);
    selector.requirements_.push_back(std::move(r));
  }
  return selector;
}

bool FieldSelector::matches(const FieldGetter& field) const {
  for (const auto& r : requirements_) {
    const std::string value = field(r.field).value_or(std::string());
    if ((value == r.value) == r.negated) return false;
  }
  return true;
}

bool FieldSelector::matches(const Object& object) const {
  return matches([&object](std::string_view path) -> std::optional<std::string> {
    if (path == "metadata.name") return std::string(object.name());
    if (path == "metadata.namespace") return std::string(object.namespace_());
    auto value = object.field(path);
    if (!value) return std::nullopt;
    return std::move(value).value();
  });
}

std::string FieldSelector::to_string() const {
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty()) out += ',';
    out += r.field + (r.negated ? "!=" : "=") + escape_field_value(r.value);
  }
  return out;
}

std::optional<std::string> label_key_problem(std::string_view key) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return qualified_name_problem(key, false);
  if (auto p = dns_subdomain_problem(key.substr(0, slash))) return p;
  return qualified_name_problem(key.substr(slash + 1), false);
}

std::optional<std::string> label_value_problem(std::string_view value) {
  return qualified_name_problem(value, true);
}

}  // namespace kinformer
