#include "precomputed_text.hpp"

#include <cstring>

#include <fmt/format.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>

#include "wscsl/config/limits.hpp"
#include "wscsl/nn/device.hpp"
#include "wscsl/nn/distances.hpp"

namespace wscsl::precomputed_text {

Schema<PrecomputedTextOptions> PrecomputedText::schema() {
  using O = PrecomputedTextOptions;
  Schema<O> s(
      "Text features read from a file and looked up by the exact text (e.g. the HGLMM vectors "
      "released with Polyvore Outfits), mapped to φ's space by a trainable head and "
      "L2-normalised. A text the file does not list is absent.");
  s.field("file", &O::file,
          "The features: an HGLMM text file or a [N, F] .npy matrix, relative to the pipeline's "
          "folder (default: the text features the dataset's release ships, e.g. Polyvore "
          "Outfits' train_hglmm_pca6000.txt of its split).")
      .path()
      .default_from(facts::dataset_text_features);
  s.field("format", &O::format, "How `file` stores the features.",
          EnumChoices<Format>{
              {Format::Hglmm, "hglmm",
               "one text per line, its key then its last `dim` comma-separated values (the "
               "released train_hglmm_pca6000.txt)"},
              {Format::Npy, "npy", "a float32 or float64 [N, F] matrix, its keys in `keys`"}});
  s.field("dim", &O::dim, "F, the number of values at the end of each line.")
      .min(1)
      .max(kMaxLayerSize)
      .only_when("format = \"hglmm\"", [](const O& o) { return o.format == Format::Hglmm; });
  s.field("keys", &O::keys,
          "A text file naming the text of each row of the .npy matrix, one per line (required "
          "with format = \"npy\"), relative to the pipeline's folder.")
      .path()
      .only_when("format = \"npy\"", [](const O& o) { return o.format == Format::Npy; });
  s.field("head", &O::head, "What maps the F file values to the E text features.",
          EnumChoices<Head>{
              {Head::Released, "released",
               "Linear(F→E), BatchNorm1d(E, eps 1e-3, momentum 0.01), ReLU, Linear(E→E), then "
               "v/(‖v‖+1e-10) (Vasileva et al.'s text branch)"},
              {Head::Linear, "linear", "Linear(F→E), then v/(‖v‖+1e-10)"},
              {Head::None, "none", "the values themselves (F must equal E), v/(‖v‖+1e-10)"}});
  s.field("output_dim", &O::output_dim,
          "E, the size of the text features (the backbone's embedding size, which the host "
          "requires).")
      .min(1)
      .max(kMaxLayerSize)
      .default_from(facts::backbone_embedding_dim);
  s.check([](const O& o, FieldChecker& c) {
    if (o.format == Format::Npy && o.keys.empty())
      c.error("keys", "is required with format = \"npy\": the text file naming each row");
  });
  return s;
}

TextFeatureTable PrecomputedText::read_table(const Options& options) {
  switch (options.format) {
    case Format::Hglmm:
      return read_hglmm_features(options.file, options.dim);
    case Format::Npy:
      return text_features_from_npy(read_npy_matrix(options.file), options.file,
                                    read_text_keys(options.keys), options.keys);
  }
  throw Error("unknown format");
}

PrecomputedText::PrecomputedText(const Options& options)
    : options_(options), table_(read_table(options)) {
  if (table_.repeated_keys() > 0)
    fmt::print(stderr,
               "wscsl: warning: precomputed_text: {}: {} line{} repeat a key read before; each "
               "key keeps its last values, as the released loader's dict does ({})\n",
               options.format == Format::Npy ? options.keys : options.file, table_.repeated_keys(),
               table_.repeated_keys() == 1 ? "" : "s", table_.first_repeat());
  namespace tnn = torch::nn;
  const std::int64_t f = table_.dim(), e = options.output_dim;
  switch (options.head) {
    case Head::Released:
      fc1_ = register_module(
          "fc1",
          tnn::Sequential(tnn::Linear(f, e),
                          tnn::BatchNorm1d(tnn::BatchNormOptions(e).eps(1e-3).momentum(0.01)),
                          tnn::ReLU()));
      fc2_ = register_module("fc2", tnn::Linear(e, e));
      break;
    case Head::Linear:
      fc_ = register_module("fc", tnn::Linear(f, e));
      break;
    case Head::None:
      if (f != e)
        throw DataError(fmt::format(
            "{}: its features have {} values and head = \"none\" passes them on unchanged; "
            "expected output_dim = {} (the backbone's embedding size) to equal it, or a head "
            "that maps them (\"linear\", \"released\")",
            options.file, f, e));
      break;
  }
}

TextFeatures PrecomputedText::encode_impl(const std::vector<std::string>& texts) {
  const auto b = static_cast<std::int64_t>(texts.size());
  const std::int64_t f = table_.dim();
  // Absent texts keep zero values and go through the head with the others, as in the released
  // code (their rows count in the batch norm's statistics); the interface zeroes their features.
  torch::Tensor values = torch::zeros({b, f});
  torch::Tensor present = torch::zeros({b}, torch::kBool);
  float* out = values.data_ptr<float>();
  auto is_present = present.accessor<bool, 1>();
  for (std::int64_t i = 0; i < b; ++i) {
    const std::int64_t row = table_.find(texts[static_cast<std::size_t>(i)]);
    if (row < 0) continue;
    std::memcpy(out + i * f, table_.row(row), static_cast<std::size_t>(f) * sizeof(float));
    is_present[i] = true;
  }
  values = values.to(nn::device_of(*this));
  switch (options_.head) {
    case Head::Released:
      values = fc2_->forward(fc1_->forward(values));
      break;
    case Head::Linear:
      values = fc_->forward(values);
      break;
    case Head::None:
      break;
  }
  return {nn::normalize_offset(values, 1), present};
}

}  // namespace wscsl::precomputed_text

WSCSL_PLUGIN(precomputed_text, "0.1.0",
             "Text features precomputed in a file (HGLMM text or .npy), looked up by text") {
  registrar.add<wscsl::TextEncoder, wscsl::precomputed_text::PrecomputedText>("precomputed_text");
}
