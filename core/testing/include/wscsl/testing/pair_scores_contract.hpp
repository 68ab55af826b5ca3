// The rule every condition module that provides pair scores keeps, checked in one call from a
// plugin's own tests:
//
//   auto m = wscsl::testing::build<wscsl::ConditionModule>("single", "", wscsl::testing::facts(4,
//   3)); EXPECT_EQ(wscsl::testing::pair_scores_contract(*m, wscsl::testing::random_triplets(*m, 5,
//   3)),
//             "");
#pragma once

#include <cstdint>
#include <string>

#include "wscsl/testing/fixtures.hpp"

namespace wscsl::testing {

// Scores the pairs (first, second) of `triplets` and the triplets (first, second, second), with the
// generator seeded with `seed` before each (so that a module drawing at random draws alike), and
// returns every broken rule, one per line ("" when the module keeps them all):
//  * the module's contract provides pair_scores (else that is the only line: pairs are not scored);
//  * a pair scores exactly as the triplet whose third item is its second, which is how the outfit
//    evaluators scored pairs before modules scored them: the same fused distance, distances under
//    each embedding, condition weights and auxiliary terms, bit for bit;
//  * a pair's scores hold nothing for a third item.
std::string pair_scores_contract(ConditionModule& module, const RandomTriplets& triplets,
                                 std::uint64_t seed = 0);

}  // namespace wscsl::testing
