// Decoded images kept in memory as uint8 tensors, so a run decodes and resizes each image once.
// The store has a memory bound; a dataset that does not fit is refused with the bytes it needs.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

namespace wscsl {

class ImageStore {
 public:
  // Images of channels × height × width bytes; at most `limit_bytes` in all.
  ImageStore(std::int64_t channels, std::int64_t height, std::int64_t width,
             std::int64_t limit_bytes);

  std::int64_t image_bytes() const { return channels_ * height_ * width_; }
  std::int64_t used_bytes() const { return stored_ * image_bytes(); }
  bool contains(std::int64_t id) const { return slots_.count(id) != 0; }

  // Makes room for `ids` (none stored yet) in one new block and returns where each one's pixels
  // go (channel-major). Throws DataError stating the bytes needed, the bound and how to raise it
  // (the dataset option `cache_limit_mb`).
  std::vector<std::uint8_t*> allocate(const std::vector<std::int64_t>& ids);

  // uint8 [B, C, H, W] copies of stored images.
  at::Tensor gather(const std::vector<std::int64_t>& ids) const;

 private:
  std::int64_t channels_, height_, width_, limit_bytes_;
  std::int64_t stored_ = 0;
  std::vector<at::Tensor> blocks_;
  std::unordered_map<std::int64_t, std::uint8_t*> slots_;
};

}  // namespace wscsl
