// Upper bounds that size options share, so that an absurd value is refused by `wscsl check` (and
// stated by `wscsl describe`) instead of exhausting memory while the model is built.
#pragma once

#include <cstdint>

namespace wscsl {

// Channels, hidden units and embedding sizes of one layer.
inline constexpr std::int64_t kMaxLayerSize = 65536;
// Embeddings (conditions) a condition module learns.
inline constexpr std::int64_t kMaxEmbeddings = 1024;

}  // namespace wscsl
