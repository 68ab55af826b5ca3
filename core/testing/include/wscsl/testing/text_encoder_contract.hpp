// The rules every text encoder keeps, checked in one call from a plugin's own tests:
//
//   auto encoder = wscsl::testing::build<wscsl::TextEncoder>("bag_of_words", "",
//                                                            wscsl::testing::facts(1, 8));
//   EXPECT_EQ(wscsl::testing::text_encoder_contract(*encoder, {"red dress", "?!", "blue coat"},
//                                                   {true, false, true}),
//             "");
#pragma once

#include <string>
#include <vector>

#include "wscsl/plugin/text_encoder.hpp"

namespace wscsl::testing {

// Encodes `texts` (with an empty string appended, which must be absent) and returns every broken
// rule, one per line ("" when the encoder keeps them all):
//  * features are floating [B, output_dim()] and `present` is bool [B], on the same device;
//  * `present` is `expected_present` (for the texts given) and false for the empty string;
//  * the rows of absent texts are exactly zero, those of present texts finite;
//  * in training mode, a loss on the features reaches every parameter that requires a gradient
//    (a defined gradient with a non-zero entry);
//  * in evaluation mode, encoding the same batch twice gives identical features, and a batch of
//    absent texts only gives zeros.
// At least two texts must be present (a batch norm in training mode needs two rows). The encoder's
// training mode is restored and its gradients cleared afterwards.
std::string text_encoder_contract(TextEncoder& encoder, const std::vector<std::string>& texts,
                                  const std::vector<bool>& expected_present);

}  // namespace wscsl::testing
