#include "wscsl/data/outfit_types.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <torch/types.h>

#include "wscsl/error.hpp"

namespace fs = std::filesystem;

namespace wscsl {

std::int64_t TypeSpaces::type_index(const std::string& type) const {
  const auto it = std::lower_bound(types.begin(), types.end(), type);
  return it != types.end() && *it == type ? it - types.begin() : -1;
}

std::string TypeSpaces::condition_name(std::size_t k) const {
  return conditions[k].first + "+" + conditions[k].second;
}

at::Tensor TypeSpaces::matrix() const {
  return torch::tensor(condition, torch::kLong).view({num_types(), num_types()});
}

TypeSpaces type_spaces_from_pairs(const std::vector<TypePair>& pairs, const fs::path& file) {
  TypeSpaces s;
  std::set<std::string> names;
  for (const TypePair& p : pairs)
    names.insert({p.first, p.second});
  if (names.size() > static_cast<std::size_t>(kMaxItemTypes))
    throw DataError(fmt::format("{}: names {} item types, more than the {} a dataset may have",
                                file.string(), names.size(), kMaxItemTypes));
  s.types.assign(names.begin(), names.end());
  s.conditions = pairs;
  const std::int64_t t = s.num_types();
  s.condition.assign(static_cast<std::size_t>(t * t), -1);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const std::int64_t a = s.type_index(pairs[k].first);
    const std::int64_t b = s.type_index(pairs[k].second);
    auto& ab = s.condition[static_cast<std::size_t>(a * t + b)];
    if (ab >= 0)
      throw DataError(
          fmt::format("{}: entry {} ({}, {}) repeats the type pair of entry {}; "
                      "expected each unordered pair once",
                      file.string(), k, pairs[k].first, pairs[k].second, ab));
    ab = static_cast<std::int64_t>(k);
    s.condition[static_cast<std::size_t>(b * t + a)] = static_cast<std::int64_t>(k);
  }
  for (std::int64_t a = 0; a < t; ++a)
    for (std::int64_t b = a; b < t; ++b)
      if (s.pair_condition(a, b) < 0)
        throw DataError(
            fmt::format("{}: lists no entry for the type pair ({}, {}); expected "
                        "every pair of its {} types ({} pairs)",
                        file.string(), s.types[static_cast<std::size_t>(a)],
                        s.types[static_cast<std::size_t>(b)], t, t * (t + 1) / 2));
  return s;
}

TypeSpaces all_type_pairs(std::vector<std::string> types) {
  TypeSpaces s;
  s.types = std::move(types);
  const std::int64_t t = s.num_types();
  s.condition.assign(static_cast<std::size_t>(t * t), -1);
  for (std::int64_t a = 0; a < t; ++a)
    for (std::int64_t b = a; b < t; ++b) {
      const auto k = static_cast<std::int64_t>(s.conditions.size());
      s.conditions.emplace_back(s.types[static_cast<std::size_t>(a)],
                                s.types[static_cast<std::size_t>(b)]);
      s.condition[static_cast<std::size_t>(a * t + b)] = k;
      s.condition[static_cast<std::size_t>(b * t + a)] = k;
    }
  return s;
}

}  // namespace wscsl
