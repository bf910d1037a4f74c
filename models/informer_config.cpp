#include "models/informer_config.hpp"

#include <fstream>
#include <iterator>
#include <optional>
#include <nlohmann/json.hpp>

#include "models/model_error.hpp"

namespace kinformer::models {
namespace {

using nlohmann::json;

int time_features_for(char freq) {
  switch (freq) {
    case 'h': return 4;
    case 't': return 5;
    case 's': return 6;
    case 'm': case 'a': return 1;
    case 'w': return 2;
    case 'd': case 'b': return 3;
    default: return 0;
  }
}

[[noreturn]] void bad(const std::string& key, const std::string& why) {
  throw ModelError("config key '" + key + "': " + why);
}

int positive_int(const json& v, const std::string& key) {
  if (!v.is_number_integer() || v.get<long long>() < 1) bad(key, "expected a positive integer, got " + v.dump());
  return v.get<int>();
}

std::string text(const json& v, const std::string& key) {
  if (!v.is_string()) bad(key, "expected a string, got " + v.dump());
  return v.get<std::string>();
}

bool flag(const json& v, const std::string& key) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int>() != 0;
  bad(key, "expected true or false, got " + v.dump());
}

// In InstanceNormKind order.
constexpr const char* instance_norm_names[] = {"none", "mean_std", "last_value", "naive_residual",
                                               "linear_residual"};

std::optional<InstanceNormKind> parse_instance_norm(const std::string& name) {
  for (size_t i = 0; i < std::size(instance_norm_names); ++i)
    if (name == instance_norm_names[i]) return static_cast<InstanceNormKind>(i);
  return std::nullopt;
}

}  // namespace

int InformerConfig::time_features() const { return time_features_for(freq); }

InformerConfig parse_config(const std::string& json_text, std::vector<std::string>* warnings) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    throw ModelError(std::string("config is not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) throw ModelError("config must be a JSON object");
  InformerConfig c;
  bool naive_base_given = false;
  int* ints[] = {&c.enc_in, &c.dec_in, &c.c_out, &c.seq_len, &c.label_len, &c.pred_len,
                 &c.factor, &c.d_model, &c.n_heads, &c.e_layers, &c.d_layers, &c.d_ff};
  const char* int_keys[] = {"enc_in", "dec_in", "c_out", "seq_len", "label_len", "pred_len",
                            "factor", "d_model", "n_heads", "e_layers", "d_layers", "d_ff"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    bool known = false;
    for (size_t i = 0; i < std::size(int_keys); ++i)
      if (key == int_keys[i]) {
        *ints[i] = positive_int(v, key);
        known = true;
      }
    if (known) continue;
    if (key == "dropout") {
      if (!v.is_number()) bad(key, "expected a number");
      c.dropout = v.get<double>();
    } else if (key == "attn") {
      auto s = text(v, key);
      if (s != "prob" && s != "full") bad(key, "expected \"prob\" or \"full\", got \"" + s + "\"");
      c.attn = s == "prob" ? AttentionKind::prob : AttentionKind::full;
    } else if (key == "embed") {
      c.embed = text(v, key);
      if (c.embed != "timeF") bad(key, "only \"timeF\" is implemented, got \"" + c.embed + "\"");
    } else if (key == "freq") {
      auto s = text(v, key);
      if (s.empty() || time_features_for(s.back()) == 0) bad(key, "unsupported frequency \"" + s + "\" (use h, t, s, m, a, w, d or b)");
      c.freq = s.back();
    } else if (key == "activation") {
      auto s = text(v, key);
      if (s != "gelu" && s != "relu") bad(key, "expected \"gelu\" or \"relu\", got \"" + s + "\"");
      c.activation = s == "gelu" ? Activation::gelu : Activation::relu;
    } else if (key == "distil") {
      c.distil = flag(v, key);
    } else if (key == "mix") {
      c.mix = flag(v, key);
    } else if (key == "instance_norm") {
      auto s = text(v, key);
      auto kind = parse_instance_norm(s);
      if (!kind)
        bad(key, "expected \"none\", \"mean_std\", \"last_value\", \"naive_residual\" or \"linear_residual\", got \"" +
                     s + "\"");
      c.instance_norm = *kind;
    } else if (key == "naive_base") {
      auto s = text(v, key);
      auto kind = parse_naive_kind(s);
      if (!kind) bad(key, "expected \"last_value\", \"last_day\" or \"last_day_mean\", got \"" + s + "\"");
      c.naive_base = *kind;
      naive_base_given = true;
    } else if (key == "instance_norm_affine") {
      c.instance_norm_affine = flag(v, key);
    } else if (warnings) {
      warnings->push_back("config: unknown key '" + key + "' ignored");
    }
  }
  if (c.instance_norm != InstanceNormKind::none && (c.dec_in != c.enc_in || c.c_out != c.enc_in))
    bad("instance_norm", "needs enc_in == dec_in == c_out (the forecast is mapped back per input channel)");
  if (naive_base_given && c.instance_norm != InstanceNormKind::naive_residual)
    bad("naive_base", "needs instance_norm \"naive_residual\"");
  if (c.instance_norm == InstanceNormKind::none && c.instance_norm_affine)
    bad("instance_norm_affine", "needs an instance_norm other than \"none\"");
  if (c.d_model % c.n_heads != 0)
    throw ModelError("config: d_model " + std::to_string(c.d_model) + " is not divisible by n_heads " + std::to_string(c.n_heads));
  return c;
}

InformerConfig load_config(const std::string& path, std::vector<std::string>* warnings) {
  std::ifstream in(path);
  if (!in) throw ModelError("config file '" + path + "': cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return parse_config(text, warnings);
  } catch (const ModelError& e) {
    throw ModelError("config file '" + path + "': " + e.what());
  }
}

std::string to_json(const InformerConfig& c) {
  json doc = {{"enc_in", c.enc_in},     {"dec_in", c.dec_in},       {"c_out", c.c_out},
              {"seq_len", c.seq_len},   {"label_len", c.label_len}, {"pred_len", c.pred_len},
              {"factor", c.factor},     {"d_model", c.d_model},     {"n_heads", c.n_heads},
              {"e_layers", c.e_layers}, {"d_layers", c.d_layers},   {"d_ff", c.d_ff},
              {"dropout", c.dropout},   {"attn", c.attn == AttentionKind::prob ? "prob" : "full"},
              {"embed", c.embed},       {"freq", std::string(1, c.freq)},
              {"activation", c.activation == Activation::gelu ? "gelu" : "relu"},
              {"distil", c.distil},     {"mix", c.mix}};
  if (c.instance_norm != InstanceNormKind::none) {
    doc["instance_norm"] = instance_norm_names[static_cast<size_t>(c.instance_norm)];
    doc["instance_norm_affine"] = c.instance_norm_affine;
    if (c.instance_norm == InstanceNormKind::naive_residual) doc["naive_base"] = to_string(c.naive_base);
  }
  return doc.dump(1);
}

}  // namespace kinformer::models
