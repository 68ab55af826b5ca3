#include "wscsl/data/image_store.hpp"

#include <cstring>

#include <fmt/format.h>
#include <torch/types.h>

#include "wscsl/error.hpp"

namespace wscsl {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

std::int64_t mib_rounded_up(std::int64_t bytes) {
  return (bytes + kMiB - 1) / kMiB;
}

}  // namespace

ImageStore::ImageStore(std::int64_t channels, std::int64_t height, std::int64_t width,
                       std::int64_t limit_bytes)
    : channels_(channels), height_(height), width_(width), limit_bytes_(limit_bytes) {}

std::vector<std::uint8_t*> ImageStore::allocate(const std::vector<std::int64_t>& ids) {
  const auto count = static_cast<std::int64_t>(ids.size());
  const std::int64_t needed = count * image_bytes();
  if (used_bytes() + needed > limit_bytes_)
    throw DataError(fmt::format(
        "the decoded images do not fit the cache: {} more images of {}×{}×{} bytes need {} MiB "
        "on top of the {} MiB cached, and the bound is cache_limit_mb = {}; raise it to at least "
        "{} in the [dataset] table (or --set dataset.cache_limit_mb={}) if the machine has the "
        "memory, or use fewer triplets",
        count, channels_, height_, width_, mib_rounded_up(needed), mib_rounded_up(used_bytes()),
        limit_bytes_ / kMiB, mib_rounded_up(used_bytes() + needed),
        mib_rounded_up(used_bytes() + needed)));
  std::vector<std::uint8_t*> where;
  if (count == 0) return where;
  blocks_.push_back(torch::empty({count, channels_, height_, width_}, torch::kUInt8));
  std::uint8_t* base = blocks_.back().data_ptr<std::uint8_t>();
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint8_t* slot = base + i * image_bytes();
    slots_.emplace(ids[static_cast<std::size_t>(i)], slot);
    where.push_back(slot);
  }
  stored_ += count;
  return where;
}

at::Tensor ImageStore::gather(const std::vector<std::int64_t>& ids) const {
  at::Tensor out = torch::empty({static_cast<std::int64_t>(ids.size()), channels_, height_, width_},
                                torch::kUInt8);
  std::uint8_t* dst = out.data_ptr<std::uint8_t>();
  for (std::int64_t id : ids) {
    const auto it = slots_.find(id);
    if (it == slots_.end()) throw Error(fmt::format("image {} was never decoded", id));
    std::memcpy(dst, it->second, static_cast<std::size_t>(image_bytes()));
    dst += image_bytes();
  }
  return out;
}

}  // namespace wscsl
