// A dataset for the contract corpus (tests/pipelines/contracts): a few tiny images whose triplets
// carry conditions and whose images carry factor labels only when the options say so, so that
// pipelines can be checked against datasets that lack either.
#include "wscsl/sdk.hpp"

namespace {

struct BareOptions {
  bool conditions = true;
  bool factors = true;
};

constexpr std::int64_t kImages = 8;
constexpr std::int64_t kSide = 8;

class BareTriplets final : public wscsl::Dataset {
 public:
  using Options = BareOptions;
  static wscsl::Schema<Options> schema() {
    wscsl::Schema<Options> s("Eight 8×8 grey images and two triplets per split (a test fixture).");
    s.field("conditions", &Options::conditions, "The triplets carry their condition.");
    s.field("factors", &Options::factors, "The images carry factor labels.");
    return s;
  }
  static wscsl::Contract contract_of(const Options& o) {
    wscsl::Contract c;
    if (o.conditions) c.provides.push_back({wscsl::Resource::TripletConditions});
    if (o.factors) c.provides.push_back({wscsl::Resource::ImageFactors});
    return c;
  }
  explicit BareTriplets(const Options& options) : options_(options) {}

  wscsl::DatasetInfo info() const override {
    wscsl::DatasetInfo d;
    d.conditions = {{"shape", {"round", "square"}, false}, {"shade", {"dark", "light"}, false}};
    d.channels = 1;
    d.height = kSide;
    d.width = kSide;
    d.splits = {wscsl::Split::Train, wscsl::Split::Val, wscsl::Split::Test};
    return d;
  }

 protected:
  wscsl::SplitData load_split(wscsl::Split) override {
    wscsl::SplitData data;
    data.num_images = kImages;
    data.triplets = torch::tensor({0, 1, 2, 3, 4, 5}, torch::kLong).reshape({2, 3});
    if (options_.conditions) data.conditions = torch::tensor({0, 1}, torch::kLong);
    if (options_.factors)
      data.factors = torch::arange(kImages * 2, torch::kLong).reshape({kImages, 2}) % 2;
    return data;
  }
  at::Tensor load_images(wscsl::Split, const at::Tensor& ids, const wscsl::ImageRequest&) override {
    return torch::ones({ids.size(0), 1, kSide, kSide}) * ids.to(torch::kFloat).view({-1, 1, 1, 1});
  }

 private:
  Options options_;
};

}  // namespace

WSCSL_PLUGIN(contract_fixtures, "1.0.0", "Datasets for the contract corpus") {
  registrar.add<wscsl::Dataset, BareTriplets>("bare_triplets");
}
