// A random number generator whose every output is specified here, so the same seed gives the same
// benchmark, triplets and data order with any compiler and standard library
// (std::uniform_int_distribution and std::shuffle are implementation-defined).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace wscsl {

// SplitMix64 step: a good 64-bit mixer, used for seeding and for combining seeds.
std::uint64_t splitmix64(std::uint64_t& state);
// A seed for an independent stream, e.g. mix_seed(seed, epoch).
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream);

// xoshiro256** (Blackman & Vigna), seeded through SplitMix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  // Uniform integer in [0, n) for n >= 1 (Lemire's multiply-and-reject method).
  std::uint64_t below(std::uint64_t n);
  // Uniform integer in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform();

  // Fisher-Yates, drawing with below().
  template <class T>
  void shuffle(std::vector<T>& values) {
    for (std::size_t i = values.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(below(i));
      std::swap(values[i - 1], values[j]);
    }
  }

 private:
  std::uint64_t s_[4];
};

// 0, 1, ..., n-1 in an order drawn from `seed` (Rng::shuffle): the first k entries are a seeded
// sample of k items without replacement, and the sample for a larger k contains it.
std::vector<std::int64_t> seeded_permutation(std::uint64_t seed, std::int64_t n);

}  // namespace wscsl
