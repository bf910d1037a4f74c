#include "models/onednn/weights.hpp"

#include "models/batch_norm.hpp"

namespace kinformer::models::onednn {
namespace {

Tensor stack_rows(std::initializer_list<const Tensor*> parts) {
  Tensor out;
  Shape shape = parts.begin()[0]->shape;
  shape[0] = 0;
  for (const Tensor* p : parts) {
    shape[0] += p->shape[0];
    out.data.insert(out.data.end(), p->data.begin(), p->data.end());
  }
  out.shape = shape;
  return out;
}

FusedAttention fuse(const AttentionWeights& a) {
  return {stack_rows({&a.query.weight, &a.key.weight, &a.value.weight}), stack_rows({&a.query.bias, &a.key.bias, &a.value.bias}),
          stack_rows({&a.key.weight, &a.value.weight}), stack_rows({&a.key.bias, &a.value.bias})};
}

FoldedConv fold_batch_norm(const DistilWeights& d) {
  FoldedConv folded{d.conv_weight, d.conv_bias};
  Tensor &w = folded.weight, &b = folded.bias;
  const std::vector<float> scale = batch_norm_scale(d);
  const int64_t out = w.dim(0), per_out = w.size() / out;
  for (int64_t o = 0; o < out; ++o) {
    const auto c = static_cast<size_t>(o);
    for (int64_t i = 0; i < per_out; ++i) w.data[static_cast<size_t>(o * per_out + i)] *= scale[c];
    b.data[c] = (b.data[c] - d.bn_mean.data[c]) * scale[c] + d.bn_beta.data[c];
  }
  return folded;
}

}  // namespace

RearrangedWeights rearrange(const InformerWeights& w) {
  RearrangedWeights out;
  for (const auto& l : w.encoder_layers) out.encoder_attention.push_back(fuse(l.attention));
  for (const auto& l : w.decoder_layers) {
    out.decoder_self.push_back(fuse(l.self_attention));
    out.decoder_cross.push_back(fuse(l.cross_attention));
  }
  for (const auto& d : w.distil_layers) out.distil.push_back(fold_batch_norm(d));
  return out;
}

}  // namespace kinformer::models::onednn
