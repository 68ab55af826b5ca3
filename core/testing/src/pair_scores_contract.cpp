#include "wscsl/testing/pair_scores_contract.hpp"

#include <vector>

#include <fmt/format.h>

#include "wscsl/util/tensor_text.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl::testing {
namespace {

void expect_equal(const char* name, const torch::Tensor& pair, const torch::Tensor& as_triplet,
                  std::vector<std::string>& problems) {
  if (pair.defined() != as_triplet.defined()) {
    problems.push_back(fmt::format("{} is {} for the pair but {} for the triplet", name,
                                   dtype_and_shape_of(pair), dtype_and_shape_of(as_triplet)));
    return;
  }
  if (pair.defined() && !torch::equal(pair, as_triplet))
    problems.push_back(fmt::format("pair and triplet differ in {}", name));
}

}  // namespace

std::string pair_scores_contract(ConditionModule& module, const RandomTriplets& triplets,
                                 std::uint64_t seed) {
  if (!module.contract().provides_resource(Resource::PairScores, ""))
    return "the contract does not provide pair_scores";
  std::vector<std::string> problems;
  const Comparisons& c = triplets.comparisons;
  torch::manual_seed(seed);
  const ComparisonScores pair =
      module.score(triplets.items, {c.first, c.second, {}, c.conditions, {}, {}});
  torch::manual_seed(seed);
  const ComparisonScores as_triplet =
      module.score(triplets.items, {c.first, c.second, c.second, c.conditions, {}, {}});
  expect_equal("fused_second", pair.fused_second, as_triplet.fused_second, problems);
  expect_equal("second_distances", pair.second_distances, as_triplet.second_distances, problems);
  expect_equal("weights", pair.weights, as_triplet.weights, problems);
  for (const auto& [name, term] : as_triplet.aux) {
    const auto found = pair.aux.find(name);
    if (found == pair.aux.end())
      problems.push_back(fmt::format("the pair has no auxiliary term '{}'", name));
    else
      expect_equal(("aux." + name).c_str(), found->second, term, problems);
  }
  for (const auto& [name, term] : pair.aux)
    if (!as_triplet.aux.count(name))
      problems.push_back(
          fmt::format("the pair has an auxiliary term '{}' the triplet lacks", name));
  if (pair.third_distances.defined()) problems.push_back("the pair has third_distances");
  if (pair.fused_third.defined()) problems.push_back("the pair has fused_third");
  return join(problems, "\n");
}

}  // namespace wscsl::testing
