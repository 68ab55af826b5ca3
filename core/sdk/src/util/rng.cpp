#include "wscsl/util/rng.hpp"

#include <algorithm>
#include <numeric>

namespace wscsl {
namespace {

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t state = seed;
  const std::uint64_t a = splitmix64(state);
  state = a ^ (stream * 0xD1B54A32D192ED03ULL);
  return splitmix64(state);
}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t state = seed;
  for (std::uint64_t& word : s_)
    word = splitmix64(state);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t n) {
  // 128-bit multiply; reject the few values that would bias the result.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::int64_t Rng::between(std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<std::int64_t>(below(span));
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

std::vector<std::int64_t> seeded_permutation(std::uint64_t seed, std::int64_t n) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  rng.shuffle(order);
  return order;
}

}  // namespace wscsl
