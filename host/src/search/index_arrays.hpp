// The arrays of an index's chunks (index_format.hpp): written as .npy files NumPy opens, read back
// through read-only memory maps, so that a search holds the index in the page cache (shared, and
// given back under pressure) rather than in its private memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "index_format.hpp"
#include "wscsl/plugin/items.hpp"

namespace wscsl::host::search {

// One .npy file mapped read-only. Its header must be exactly the one wscsl writes for `descr`
// and `shape`, and the data must fill the rest of the file; anything else is a DataError naming
// the file (a damaged or foreign index).
class MappedNpy {
 public:
  MappedNpy(const std::filesystem::path& file, const std::string& descr,
            const std::vector<std::int64_t>& shape);
  ~MappedNpy();
  MappedNpy(const MappedNpy&) = delete;
  MappedNpy& operator=(const MappedNpy&) = delete;

  // The values, without a copy; read-only (writing through it is undefined).
  const torch::Tensor& tensor() const { return tensor_; }

 private:
  void* map_ = nullptr;
  std::size_t bytes_ = 0;
  torch::Tensor tensor_;
};

// The features of one chunk, as the index stores them.
struct ChunkArrays {
  std::unique_ptr<MappedNpy> phi, psi, psi_sqnorm;
  std::vector<std::unique_ptr<MappedNpy>> text_features, text_present;  // manifest.texts order

  // The rows `rows` of the chunk as ItemFeatures (copies, float32, on the CPU).
  ItemFeatures items(const IndexManifest& manifest, const torch::Tensor& rows) const;
};

ChunkArrays map_chunk(const std::filesystem::path& index, const IndexManifest& manifest,
                      std::size_t chunk);

// Writes the arrays of chunk `chunk` (φ, ψ, ‖ψ_k‖², each text encoder's features and presence),
// each file atomically. `items` are on the CPU.
void write_chunk_arrays(const std::filesystem::path& index, const IndexManifest& manifest,
                        std::size_t chunk, const ItemFeatures& items);

}  // namespace wscsl::host::search
