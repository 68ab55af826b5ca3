#include "wscsl/testing/fixtures.hpp"

#include <array>
#include <cmath>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/nn/state_dict.hpp"

namespace wscsl::testing {

TableModule::TableModule(std::int64_t num_embeddings, std::int64_t dim, std::vector<double> weights,
                         Supervision supervision)
    : k_(num_embeddings),
      e_(dim),
      weights_(torch::tensor(weights, torch::kFloat)),
      supervision_(supervision) {
  set_contract(pair_scoring());
}

torch::Tensor TableModule::embed_impl(const EmbedInput& input) {
  const torch::Tensor& phi = input.phi;
  return phi.reshape({phi.size(0), k_, e_});
}

ComparisonScores TableModule::score_impl(const ItemBlocks& items, const Comparisons& c) {
  return nn::expected_distances(*this, gather(items, c),
                                weights_.unsqueeze(0).expand({c.size(), k_}));
}

FixedDataset::FixedDataset(DatasetInfo info, std::map<Split, SplitData> splits)
    : info_(std::move(info)), splits_(std::move(splits)) {}

SplitData FixedDataset::load_split(Split split) {
  return splits_.at(split);
}

torch::Tensor FixedDataset::load_images(Split, const torch::Tensor& ids, const ImageRequest&) {
  torch::Tensor images = torch::full({ids.size(0), info_.channels, info_.height, info_.width}, 0.5);
  images.select(1, 0).select(1, 0).select(1, 0).copy_(ids.to(torch::kFloat));
  return images;
}

torch::Tensor CountingBackbone::forward_images(const torch::Tensor& images) {
  const torch::Tensor ids = images.select(1, 0).select(1, 0).select(1, 0).to(torch::kLong);
  const auto id = ids.accessor<std::int64_t, 1>();
  for (std::int64_t i = 0; i < ids.size(0); ++i)
    ++calls_[id[i]];
  total_ += ids.size(0);
  return ((ids.to(torch::kFloat) + 1) / 1000).unsqueeze(1).expand({ids.size(0), dim_}).clone();
}

EmbeddingTable make_table(Split split, const torch::Tensor& psi,
                          const std::vector<std::array<std::int64_t, 3>>& triplets,
                          const std::vector<std::int64_t>& conditions) {
  EmbeddingTable t;
  t.split = split;
  t.items.psi = psi.to(torch::kFloat);
  t.items.phi = t.items.psi.reshape({psi.size(0), -1});
  t.image_ids = torch::arange(psi.size(0), torch::kLong);
  torch::Tensor rows = torch::empty({static_cast<std::int64_t>(triplets.size()), 3}, torch::kLong);
  for (std::size_t i = 0; i < triplets.size(); ++i)
    for (int j = 0; j < 3; ++j)
      rows[static_cast<std::int64_t>(i)][j] = triplets[i][static_cast<std::size_t>(j)];
  t.triplets = Comparisons::triplets(rows);
  t.triplets.conditions = torch::tensor(conditions, torch::kLong);
  return t;
}

EvalReport run_evaluator(Evaluator& evaluator, ConditionModule& module, const EmbeddingTable& fit,
                         const EmbeddingTable& target, const DatasetInfo& info,
                         std::map<std::string, torch::Tensor>* shared,
                         const std::filesystem::path& artifact_dir) {
  FixedDataset data(info, {});
  std::map<std::string, torch::Tensor> local;
  EvalContext context{fit,
                      target,
                      module,
                      data,
                      info,
                      artifact_dir,
                      shared ? *shared : local,
                      true,
                      /*batch_size=*/2};
  return evaluator.evaluate(context);
}

EvalReport run_evaluator(Evaluator& evaluator, ConditionModule& module, Dataset& dataset,
                         const EmbeddingTable& fit, const EmbeddingTable& target, bool final,
                         const std::filesystem::path& artifact_dir) {
  std::map<std::string, torch::Tensor> shared;
  const DatasetInfo info = dataset.info();
  EvalContext context{fit,     target, module,
                      dataset, info,   final ? artifact_dir : std::filesystem::path(),
                      shared,  final,  /*batch_size=*/2};
  return evaluator.evaluate(context);
}

double metric(const EvalReport& report, const std::string& name) {
  for (const Metric& m : report.metrics)
    if (m.name == name) return m.value;
  throw Error("the report has no metric '" + name + "'");
}

DatasetInfo dataset_info(const std::vector<std::string>& condition_names) {
  DatasetInfo info;
  for (const std::string& name : condition_names)
    info.conditions.push_back({name, {}});
  info.channels = 3;
  info.height = info.width = 32;
  info.splits = {Split::Train, Split::Val, Split::Test};
  return info;
}

ItemBlocks TripletRoles::items() const {
  return ItemBlocks({anchor, close, far});
}

Comparisons TripletRoles::triplets() const {
  return Comparisons::triplets_by_role(anchor.size(), torch::kCPU);
}

RandomTriplets random_triplets(ConditionModule& module, std::int64_t batch, std::int64_t dim,
                               bool with_conditions) {
  std::vector<ItemFeatures> roles;
  for (int role = 0; role < 3; ++role) {
    ItemFeatures items;
    items.phi = torch::randn({batch, dim});
    roles.push_back(std::move(items));
  }
  for (ItemFeatures& items : roles)
    items.psi = module.embed(items.phi);
  RandomTriplets out{ItemFeatures::concatenated(roles),
                     Comparisons::triplets_by_role(batch, torch::kCPU)};
  if (with_conditions)
    out.comparisons.conditions = torch::randint(module.num_embeddings(), {batch}, torch::kLong);
  return out;
}

Contract pair_scoring() {
  Contract c;
  c.provides = {{Resource::PairScores}};
  return c;
}

TextFeatures unit_text_features(const std::vector<bool>& present, std::int64_t dim) {
  const auto b = static_cast<std::int64_t>(present.size());
  torch::Tensor kept = torch::empty({b}, torch::kBool);
  for (std::int64_t i = 0; i < b; ++i)
    kept[i] = static_cast<bool>(present[static_cast<std::size_t>(i)]);
  const torch::Tensor v = torch::randn({b, dim});
  return {v / v.norm(2, {1}, /*keepdim=*/true) * kept.unsqueeze(1).to(torch::kFloat), kept};
}

torch::Tensor parameter(const torch::nn::Module& module, const std::string& name) {
  for (const auto& p : module.named_parameters())
    if (p.key() == name) return p.value();
  throw Error("the module has no parameter '" + name + "'");
}

namespace {

void add_batch_norm(nn::StateDict& dict, const std::string& name, std::int64_t channels,
                    torch::Generator& rng) {
  const auto uniform = [&](double low, double high) {
    return torch::empty({channels}).uniform_(low, high, rng);
  };
  dict.emplace_back(name + ".weight", uniform(0.5, 1.5));
  dict.emplace_back(name + ".bias", uniform(-0.2, 0.2));
  dict.emplace_back(name + ".running_mean", uniform(-0.3, 0.3));
  dict.emplace_back(name + ".running_var", uniform(0.5, 2.0));
  dict.emplace_back(name + ".num_batches_tracked", torch::tensor(std::int64_t{100}));
}

void add_conv(nn::StateDict& dict, const std::string& name, std::int64_t out, std::int64_t in,
              std::int64_t kernel, torch::Generator& rng) {
  const double std = std::sqrt(2.0 / static_cast<double>(kernel * kernel * out));
  dict.emplace_back(name + ".weight",
                    torch::empty({out, in, kernel, kernel}).normal_(0.0, std, rng));
}

}  // namespace

void write_resnet18_weights(const std::filesystem::path& file, int input_channels,
                            std::uint64_t seed) {
  torch::Generator rng = at::detail::createCPUGenerator(seed);
  nn::StateDict dict;
  add_conv(dict, "conv1", 64, input_channels, 7, rng);
  add_batch_norm(dict, "bn1", 64, rng);
  std::int64_t in = 64;
  for (const auto& [layer, out] :
       {std::pair{"layer1", 64}, std::pair{"layer2", 128}, std::pair{"layer3", 256}}) {
    for (int block = 0; block < 2; ++block) {
      const std::string prefix = fmt::format("{}.{}.", layer, block);
      add_conv(dict, prefix + "conv1", out, block == 0 ? in : out, 3, rng);
      add_batch_norm(dict, prefix + "bn1", out, rng);
      add_conv(dict, prefix + "conv2", out, out, 3, rng);
      add_batch_norm(dict, prefix + "bn2", out, rng);
      if (block == 0 && in != out) {
        add_conv(dict, prefix + "downsample.0", out, in, 1, rng);
        add_batch_norm(dict, prefix + "downsample.1", out, rng);
      }
    }
    in = out;
  }
  dict.emplace_back("layer4.0.conv1.weight", torch::zeros({4, 4, 3, 3}));
  dict.emplace_back("fc.weight", torch::zeros({10, 4}));
  dict.emplace_back("fc.bias", torch::zeros({10}));
  nn::write_state_dict(file, dict);
}

}  // namespace wscsl::testing
