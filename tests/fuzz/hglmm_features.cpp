// HGLMM text features (the released train_hglmm_pca6000.txt layout) with three values per line.
#include <cmath>

#include "fuzz_target.hpp"
#include "wscsl/data/text_features.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_text(data, size, [](const std::string& text) {
    const wscsl::TextFeatureTable t = wscsl::parse_hglmm_features(text, "features.txt", 3);
    if (t.size() < 1 || t.dim() != 3) __builtin_trap();
    for (std::int64_t r = 0; r < t.size(); ++r) {
      if (t.key(r).empty() || t.find(t.key(r)) != r) __builtin_trap();
      for (std::int64_t j = 0; j < 3; ++j)
        if (!std::isfinite(t.row(r)[j])) __builtin_trap();
    }
  });
}
