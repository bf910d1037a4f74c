#include "models/informer_weights.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "models/model_error.hpp"
#include "models/safetensors.hpp"

namespace kinformer::models {
namespace {

// One expected state_dict entry: its name, shape and where it goes.
struct Slot {
  std::string name;
  Shape shape;
  Tensor* target;         // nullptr: accepted and ignored (num_batches_tracked)
  bool trainable = true;  // counts as a parameter (buffers do not)
  Shape stored_as = {};   // reshape on load (k=1 convs to 2-D, pe to 2-D); empty: keep
};

bool is_positional_table(const std::string& name) {
  static const std::string suffix = ".position_embedding.pe";
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), std::string::npos, suffix) == 0;
}

// Builds the list of every entry the config implies, in state_dict order (§4).
std::vector<Slot> expected_slots(const InformerConfig& c, InformerWeights& w) {
  const int64_t d = c.d_model, ff = c.d_ff, ft = c.time_features();
  std::vector<Slot> slots;
  auto linear = [&](const std::string& n, LinearWeights& l, int64_t out, int64_t in) {
    slots.push_back({n + ".weight", {out, in}, &l.weight});
    slots.push_back({n + ".bias", {out}, &l.bias});
  };
  auto conv1 = [&](const std::string& n, LinearWeights& l, int64_t out, int64_t in) {
    slots.push_back({n + ".weight", {out, in, 1}, &l.weight, true, {out, in}});
    slots.push_back({n + ".bias", {out}, &l.bias});
  };
  auto norm = [&](const std::string& n, NormWeights& l) {
    slots.push_back({n + ".weight", {d}, &l.gamma});
    slots.push_back({n + ".bias", {d}, &l.beta});
  };
  auto embedding = [&](const std::string& n, EmbeddingWeights& e, int64_t channels) {
    slots.push_back({n + ".value_embedding.tokenConv.weight", {d, channels, 3}, &e.token_conv_weight});
    slots.push_back({n + ".value_embedding.tokenConv.bias", {d}, &e.token_conv_bias});
    slots.push_back({n + ".position_embedding.pe", {1, 5000, d}, &e.positional, false, {5000, d}});
    linear(n + ".temporal_embedding.embed", e.time, d, ft);
  };
  auto attention = [&](const std::string& n, AttentionWeights& a) {
    linear(n + ".query_projection", a.query, d, d);
    linear(n + ".key_projection", a.key, d, d);
    linear(n + ".value_projection", a.value, d, d);
    linear(n + ".out_projection", a.out, d, d);
  };
  embedding("enc_embedding", w.enc_embedding, c.enc_in);
  embedding("dec_embedding", w.dec_embedding, c.dec_in);
  w.encoder_layers.resize(static_cast<size_t>(c.e_layers));
  for (int i = 0; i < c.e_layers; ++i) {
    auto p = "encoder.attn_layers." + std::to_string(i);
    auto& l = w.encoder_layers[static_cast<size_t>(i)];
    attention(p + ".attention", l.attention);
    conv1(p + ".conv1", l.ffn1, ff, d);
    conv1(p + ".conv2", l.ffn2, d, ff);
    norm(p + ".norm1", l.norm1);
    norm(p + ".norm2", l.norm2);
  }
  w.distil_layers.resize(c.distil ? static_cast<size_t>(c.e_layers - 1) : 0);
  for (size_t i = 0; i < w.distil_layers.size(); ++i) {
    auto p = "encoder.conv_layers." + std::to_string(i);
    auto& l = w.distil_layers[i];
    slots.push_back({p + ".downConv.weight", {d, d, 3}, &l.conv_weight});
    slots.push_back({p + ".downConv.bias", {d}, &l.conv_bias});
    slots.push_back({p + ".norm.weight", {d}, &l.bn_gamma});
    slots.push_back({p + ".norm.bias", {d}, &l.bn_beta});
    slots.push_back({p + ".norm.running_mean", {d}, &l.bn_mean, false});
    slots.push_back({p + ".norm.running_var", {d}, &l.bn_var, false});
    slots.push_back({p + ".norm.num_batches_tracked", {}, nullptr, false});
  }
  norm("encoder.norm", w.encoder_norm);
  w.decoder_layers.resize(static_cast<size_t>(c.d_layers));
  for (int i = 0; i < c.d_layers; ++i) {
    auto p = "decoder.layers." + std::to_string(i);
    auto& l = w.decoder_layers[static_cast<size_t>(i)];
    attention(p + ".self_attention", l.self_attention);
    attention(p + ".cross_attention", l.cross_attention);
    conv1(p + ".conv1", l.ffn1, ff, d);
    conv1(p + ".conv2", l.ffn2, d, ff);
    norm(p + ".norm1", l.norm1);
    norm(p + ".norm2", l.norm2);
    norm(p + ".norm3", l.norm3);
  }
  norm("decoder.norm", w.decoder_norm);
  linear("projection", w.projection, c.c_out, d);
  if (c.instance_norm_affine) {
    slots.push_back({"instance_norm.weight", {c.enc_in}, &w.instance_norm_weight});
    slots.push_back({"instance_norm.bias", {c.enc_in}, &w.instance_norm_bias});
  }
  if (c.instance_norm == InstanceNormKind::linear_residual)
    // A buffer: fitted before training and frozen (tools/train_informer.py).
    slots.push_back({"instance_norm.linear_base", {c.seq_len, c.pred_len}, &w.instance_norm_linear_base, false});
  return slots;
}

}  // namespace

std::shared_ptr<const InformerWeights> load_weights(const std::string& path, const InformerConfig& config) {
  auto file = read_safetensors(path);
  bool all_prefixed = !file.empty();
  for (const auto& [name, t] : file) all_prefixed = all_prefixed && name.rfind("module.", 0) == 0;
  if (all_prefixed) {
    std::map<std::string, SafeTensor> stripped;
    for (auto& [name, t] : file) stripped.emplace(name.substr(7), std::move(t));
    file = std::move(stripped);
  }
  auto weights = std::make_shared<InformerWeights>();
  for (const auto& slot : expected_slots(config, *weights)) {
    auto it = file.find(slot.name);
    if (it == file.end()) {
      if (!slot.target) continue;  // num_batches_tracked is optional
      // The positional table is a fixed function of D, so compact files leave it out.
      if (is_positional_table(slot.name)) {
        *slot.target = Tensor(slot.stored_as);
        fill_positional_table(*slot.target);
        continue;
      }
      throw ModelError("weights file '" + path + "': missing tensor '" + slot.name + "' (expected shape " +
                       to_string(slot.shape) + ")");
    }
    if (it->second.shape != slot.shape)
      throw ModelError("weights file '" + path + "': tensor '" + slot.name + "' has shape " + to_string(it->second.shape) +
                       ", the config needs " + to_string(slot.shape));
    if (slot.target) {
      if (it->second.dtype[0] != 'F')
        throw ModelError("weights file '" + path + "': tensor '" + slot.name + "' has dtype " + it->second.dtype +
                         ", expected a float type");
      *slot.target = std::move(it->second.values);
      if (!slot.stored_as.empty()) slot.target->shape = slot.stored_as;
    }
    file.erase(it);
  }
  if (!file.empty()) {
    std::string names;
    for (const auto& [name, t] : file) names += (names.empty() ? "'" : ", '") + name + "'";
    throw ModelError("weights file '" + path + "': unexpected tensor(s) " + names +
                     " (does the config match the weights? e_layers, d_layers, distil)");
  }
  return weights;
}

void fill_positional_table(Tensor& table) {
  const int64_t d = table.dim(1);
  for (int64_t p = 0; p < table.dim(0); ++p)
    for (int64_t i = 0; i < d; i += 2) {
      const double w = std::exp(-static_cast<double>(i) * std::log(10000.0) / static_cast<double>(d));
      table.data[static_cast<size_t>(p * d + i)] = static_cast<float>(std::sin(static_cast<double>(p) * w));
      if (i + 1 < d) table.data[static_cast<size_t>(p * d + i + 1)] = static_cast<float>(std::cos(static_cast<double>(p) * w));
    }
}

std::shared_ptr<const InformerWeights> random_weights(const InformerConfig& config, uint32_t seed) {
  auto weights = std::make_shared<InformerWeights>();
  std::mt19937 rng(seed);
  for (const auto& slot : expected_slots(config, *weights)) {
    if (!slot.target) continue;
    Tensor& t = *slot.target;
    t = Tensor(slot.stored_as.empty() ? slot.shape : slot.stored_as);
    const std::string& n = slot.name;
    auto ends_with = [&](const char* s) { return n.size() >= std::strlen(s) && n.compare(n.size() - std::strlen(s), std::string::npos, s) == 0; };
    if (ends_with(".pe")) {
      fill_positional_table(t);
    } else if (ends_with("running_var") || (n.find("norm") != std::string::npos && ends_with(".weight"))) {
      std::fill(t.data.begin(), t.data.end(), 1.f);
    } else if (n.find("norm") != std::string::npos && !ends_with(".linear_base")) {
      std::fill(t.data.begin(), t.data.end(), 0.f);  // LayerNorm/BatchNorm β and running_mean
    } else {
      const int64_t fan_in = slot.shape.size() > 1 ? element_count(slot.shape) / slot.shape[0] : slot.shape[0];
      std::uniform_real_distribution<float> u(-1.f, 1.f);
      const float bound = 1.f / std::sqrt(static_cast<float>(fan_in));
      for (auto& v : t.data) v = bound * u(rng);
    }
  }
  return weights;
}

int64_t parameter_count(const InformerConfig& config) {
  InformerWeights scratch;
  int64_t n = 0;
  for (const auto& slot : expected_slots(config, scratch))
    if (slot.trainable) n += element_count(slot.shape);
  return n;
}

}  // namespace kinformer::models
