#include "fashion_crb.hpp"

#include <set>

#include <fmt/format.h>

#include "wscsl/data/idx_reader.hpp"
#include "wscsl/data/triplets.hpp"

namespace wscsl::fashion_crb {
namespace {

constexpr std::int64_t kTestFileItems = 10000;

template <std::size_t N>
std::vector<std::string> names(const std::array<const char*, N>& values) {
  return std::vector<std::string>(values.begin(), values.end());
}

// Rendered images, never files, given to the model as x/255.
ImagePreparation rendered_images() {
  ImagePreparation p;
  p.files = FilePreparation::None;
  p.normalization = PixelNormalization::None;
  return p;
}

}  // namespace

RenderedSplit render_split(const std::vector<std::uint8_t>& garments,
                           const std::vector<std::uint8_t>& labels, std::int64_t first,
                           std::int64_t count, std::uint64_t seed) {
  RenderedSplit out;
  out.images = torch::empty({count, 3, kCanvasSize, kCanvasSize}, torch::kUInt8);
  out.factors.reserve(static_cast<std::size_t>(count));
  Rng rng(seed);
  std::uint8_t* pixels = out.images.data_ptr<std::uint8_t>();
  constexpr std::int64_t sample_bytes = 3 * kCanvasSize * kCanvasSize;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t source = first + i;
    const SampleFactors f = draw_factors(rng, labels[static_cast<std::size_t>(source)]);
    render(garments.data() + source * kGarmentSize * kGarmentSize, f, pixels + i * sample_bytes);
    out.factors.push_back(f);
  }
  return out;
}

std::pair<torch::Tensor, torch::Tensor> draw_triplets(
    const std::vector<std::vector<int>>& factor_values, std::int64_t count, std::uint64_t seed) {
  const std::size_t k_count = factor_values.empty() ? 0 : factor_values[0].size();
  std::vector<AttributeColumn> columns(k_count);
  for (std::size_t k = 0; k < k_count; ++k) {
    columns[k].name = std::to_string(k);
    for (const std::vector<int>& item : factor_values)
      columns[k].values.push_back(item[k]);
  }
  std::vector<std::int64_t> members(factor_values.size());
  for (std::size_t i = 0; i < members.size(); ++i)
    members[i] = static_cast<std::int64_t>(i);
  Rng rng(seed);
  std::vector<Triplet> drawn = wscsl::draw_triplets(
      columns, members, equal_shares(count, static_cast<std::int64_t>(k_count)), rng);
  rng.shuffle(drawn);
  return triplet_tensors(drawn);
}

const EnumChoices<Factor>& factor_choices() {
  static const EnumChoices<Factor> choices = {
      {Factor::Category, "category", "the garment's Fashion-MNIST class (10 values)"},
      {Factor::Color, "color", "the garment's colour"},
      {Factor::Rotation, "rotation", "the garment's rotation"},
      {Factor::Background, "background", "the background's pattern"}};
  return choices;
}

namespace {

std::vector<std::string> value_names(Factor factor) {
  switch (factor) {
    case Factor::Category:
      return names(kCategoryNames);
    case Factor::Color:
      return names(kColorNames);
    case Factor::Rotation:
      return names(kRotationNames);
    case Factor::Background:
      return names(kBackgroundNames);
  }
  return {};
}

}  // namespace

Schema<FashionCrbOptions> FashionCrb::schema() {
  using O = FashionCrbOptions;
  Schema<O> s(
      "Fashion-CRB: Fashion-MNIST garments rendered at 32×32 under independent colour, rotation "
      "and background; conditions are those factors plus the garment category.");
  s.field("root", &O::root, "Directory with Debian's gzip IDX files of Fashion-MNIST.").path();
  s.field("seed", &O::seed,
          "Seed of the rendering and of the triplets (the benchmark is a pure "
          "function of the files, this seed and the sizes).")
      .min(0);
  s.field("conditions", &O::conditions, "The similarity conditions, in label order.",
          factor_choices());
  s.field("train_items", &O::train_items, "Training images (the first N of the 60,000).")
      .min(2)
      .max(60000);
  s.field("val_items", &O::val_items, "Validation images (the first N of the 10,000 test images).")
      .min(2)
      .max(kTestFileItems);
  s.field("test_items", &O::test_items, "Test images (the last N of the 10,000 test images).")
      .min(2)
      .max(kTestFileItems);
  s.field("train_triplets", &O::train_triplets, "Training triplets, split equally by condition.")
      .min(1)
      .max(kMaxTriplets);
  s.field("val_triplets", &O::val_triplets, "Validation triplets.").min(1).max(kMaxTriplets);
  s.field("test_triplets", &O::test_triplets, "Test triplets.").min(1).max(kMaxTriplets);
  s.check([](const O& o, FieldChecker& c) {
    if (o.conditions.empty()) c.error("conditions", "needs at least one condition");
    if (std::set<Factor>(o.conditions.begin(), o.conditions.end()).size() != o.conditions.size())
      c.error("conditions", "lists a condition twice");
    if (o.val_items + o.test_items > kTestFileItems)
      c.error("test_items",
              fmt::format("val_items + test_items = {} exceeds the {} test images, so "
                          "the splits would share images",
                          o.val_items + o.test_items, kTestFileItems));
  });
  return s;
}

FashionCrb::FashionCrb(const Options& options) : options_(options) {
  // Checked here, so `wscsl check` reports a missing dataset before anything runs.
  for (const char* prefix : {"train", "t10k"}) {
    for (const char* kind : {"-images-idx3-ubyte.gz", "-labels-idx1-ubyte.gz"}) {
      const std::filesystem::path file =
          std::filesystem::path(options.root) / (prefix + std::string(kind));
      std::error_code ec;
      if (!std::filesystem::is_regular_file(file, ec))
        throw DataError(
            fmt::format("{}: no such file (Debian's dataset-fashion-mnist package "
                        "provides it)",
                        file.string()));
    }
  }
}

DatasetInfo FashionCrb::info() const {
  DatasetInfo d;
  for (Factor c : options_.conditions)
    d.conditions.push_back({spelling_of(factor_choices(), c), value_names(c)});
  d.channels = 3;
  d.height = d.width = kCanvasSize;
  d.images = rendered_images();
  d.splits = {Split::Train, Split::Val, Split::Test};
  d.triplet_counts = {{Split::Train, options_.train_triplets},
                      {Split::Val, options_.val_triplets},
                      {Split::Test, options_.test_triplets}};
  return d;
}

int FashionCrb::factor_of(const SampleFactors& f, Factor condition) {
  switch (condition) {
    case Factor::Category:
      return f.category;
    case Factor::Color:
      return f.color;
    case Factor::Rotation:
      return f.rotation;
    case Factor::Background:
      return f.background;
  }
  return -1;
}

Contract FashionCrb::contract_of(const Options&) {
  Contract c;
  c.provides = {{Resource::TripletConditions}, {Resource::ImageFactors}};
  return c;
}

SplitData FashionCrb::load_split(Split split) {
  const std::filesystem::path root(options_.root);
  const bool train = split == Split::Train;
  const data::FashionMnistFiles source = data::read_fashion_mnist(root, train ? "train" : "t10k");
  const std::int64_t available = source.images.dims[0];
  std::int64_t first = 0, count = 0, triplet_count = 0;
  if (train) count = options_.train_items, triplet_count = options_.train_triplets;
  if (split == Split::Val) count = options_.val_items, triplet_count = options_.val_triplets;
  if (split == Split::Test) {
    count = options_.test_items, triplet_count = options_.test_triplets;
    first = available - count;
  }
  if (first < 0 || first + count > available)
    throw DataError(fmt::format(
        "{}: split '{}' needs {} images but the file holds {}",
        (root / (train ? "train-images-idx3-ubyte.gz" : "t10k-images-idx3-ubyte.gz")).string(),
        split_name(split), count, available));
  const std::uint64_t split_id = train ? 0 : (split == Split::Val ? 1 : 2);
  const std::uint64_t seed = static_cast<std::uint64_t>(options_.seed);
  RenderedSplit rendered = render_split(source.images.data, source.labels.data, first, count,
                                        mix_seed(seed, 2 * split_id));
  std::vector<std::vector<int>> values(rendered.factors.size());
  torch::Tensor factors =
      torch::empty({count, static_cast<std::int64_t>(options_.conditions.size())}, torch::kLong);
  auto f = factors.accessor<std::int64_t, 2>();
  for (std::size_t i = 0; i < rendered.factors.size(); ++i) {
    for (std::size_t k = 0; k < options_.conditions.size(); ++k) {
      const int v = factor_of(rendered.factors[i], options_.conditions[k]);
      values[i].push_back(v);
      f[static_cast<std::int64_t>(i)][static_cast<std::int64_t>(k)] = v;
    }
  }
  auto [triplets, conditions] =
      draw_triplets(values, triplet_count, mix_seed(seed, 2 * split_id + 1));
  images_[split] = rendered.images;
  SplitData data;
  data.num_images = count;
  data.factors = factors;
  data.triplets = triplets;
  data.conditions = conditions;
  return data;
}

torch::Tensor FashionCrb::load_images(Split split, const torch::Tensor& ids, const ImageRequest&) {
  auto it = images_.find(split);
  if (it == images_.end()) {
    this->split(split);
    it = images_.find(split);
  }
  return model_input(rendered_images(), it->second.index_select(0, ids));
}

}  // namespace wscsl::fashion_crb

WSCSL_PLUGIN(fashion_crb, "0.1.0", "Fashion-CRB, the embedded conditional-similarity benchmark") {
  registrar.add<wscsl::Dataset, wscsl::fashion_crb::FashionCrb>("fashion_crb");
}
