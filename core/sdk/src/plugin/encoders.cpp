// The non-virtual halves of Backbone and TextEncoder: what they return is checked.
#include "checks.hpp"
#include "wscsl/plugin/backbone.hpp"
#include "wscsl/plugin/text_encoder.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl {

using detail::broke_contract;
using detail::expect_floating;
using detail::expect_shape;
using detail::guarded;
using detail::who;

Backbone::~Backbone() = default;
TextEncoder::~TextEncoder() = default;

namespace {

void expect_images(const Backbone& b, const torch::Tensor& images) {
  if (!images.defined() || images.dim() != 4)
    throw ComponentError(
        fmt::format("{}: expected images [B, C, H, W], got {}", who(b), shape_of(images)));
}

void expect_feature_map(const Backbone& b) {
  if (!b.contract().provides_resource(Resource::FeatureMap, ""))
    throw ComponentError(fmt::format("{} was asked for {}, which its contract does not provide",
                                     who(b), describe_resource(Resource::FeatureMap, "")));
}

}  // namespace

torch::Tensor Backbone::embed(const torch::Tensor& images) {
  expect_images(*this, images);
  torch::Tensor out = guarded(*this, "forward", [&] { return forward_images(images); });
  expect_floating(*this, "the embedding", out, {images.size(0), embedding_dim()});
  return out;
}

BackboneOutput Backbone::embed_with_map(const torch::Tensor& images) {
  expect_images(*this, images);
  expect_feature_map(*this);
  BackboneOutput out = guarded(*this, "forward", [&] { return forward_with_map(images); });
  expect_floating(*this, "the embedding", out.phi, {images.size(0), embedding_dim()});
  if (!out.feature_map.defined() || out.feature_map.dim() != 4 ||
      out.feature_map.size(0) != images.size(0) ||
      out.feature_map.size(1) != feature_map_channels())
    broke_contract(*this, fmt::format("its feature map is {}, expected [{}, {}, h, w]",
                                      dtype_and_shape_of(out.feature_map), images.size(0),
                                      feature_map_channels()));
  expect_floating(*this, "the feature map", out.feature_map, out.feature_map.sizes().vec());
  return out;
}

std::int64_t Backbone::feature_map_channels() const {
  broke_contract(*this, "it declares no feature map and was asked for its channels");
}

BackboneOutput Backbone::forward_with_map(const torch::Tensor&) {
  broke_contract(*this, "its contract provides the feature map and it does not compute one");
}

TextFeatures TextFeatures::index_select(const torch::Tensor& rows) const {
  return {features.index_select(0, rows), present.index_select(0, rows)};
}

TextFeatures TextFeatures::to(torch::Device device) const {
  return {features.to(device), present.to(device)};
}

TextFeatures TextEncoder::encode(const std::vector<std::string>& texts) {
  const auto b = static_cast<int64_t>(texts.size());
  TextFeatures out = guarded(*this, "encode", [&] { return encode_impl(texts); });
  expect_floating(*this, "the text features", out.features, {b, output_dim()});
  torch::Tensor non_empty = torch::empty({b}, torch::kBool);
  for (int64_t i = 0; i < b; ++i)
    non_empty[i] = !texts[static_cast<std::size_t>(i)].empty();
  non_empty = non_empty.to(out.features.device());
  if (out.present.defined()) {
    expect_shape(*this, "present", out.present, {b});
    if (out.present.scalar_type() != torch::kBool)
      broke_contract(*this,
                     fmt::format("present is {}, expected bool", dtype_and_shape_of(out.present)));
    out.present = out.present.to(out.features.device()) & non_empty;
  } else {
    out.present = non_empty;
  }
  // A NaN of a present text would surface as a non-finite loss, blamed on the learning rate.
  const torch::Tensor finite = torch::isfinite(out.features).all(1) | ~out.present;
  if (!finite.all().item<bool>()) {
    const auto row = finite.logical_not().nonzero()[0][0].item<std::int64_t>();
    broke_contract(*this, fmt::format("the text features of {} (text {} of the batch) hold a "
                                      "non-finite value; expected finite features for every "
                                      "present text",
                                      quoted_excerpt(texts[static_cast<std::size_t>(row)]), row));
  }
  out.features = out.features * out.present.unsqueeze(1).to(out.features.scalar_type());
  return out;
}

}  // namespace wscsl
