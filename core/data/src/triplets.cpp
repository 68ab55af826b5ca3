#include "wscsl/data/triplets.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <ATen/ops/empty.h>
#include <fmt/format.h>

#include "wscsl/error.hpp"

namespace wscsl {
namespace {

// Categorical: members grouped by value, in ascending value order and ascending member order.
void draw_categorical(const std::vector<double>& values, const std::vector<std::int64_t>& members,
                      std::int64_t condition, const std::string& name, std::int64_t count, Rng& rng,
                      std::vector<Triplet>& out) {
  std::map<std::int64_t, std::vector<std::int64_t>> groups;
  std::uint64_t known = 0;
  for (std::int64_t id : members) {
    const double v = values[static_cast<std::size_t>(id)];
    if (!attribute_known(v, {})) continue;
    groups[static_cast<std::int64_t>(v)].push_back(id);
    ++known;
  }
  if (groups.size() < 2)
    throw DataError(fmt::format(
        "cannot draw triplets for condition '{}': all {} images with a known value share one "
        "value",
        name, known));
  bool any_pair = false;
  for (const auto& [value, items] : groups)
    any_pair |= items.size() >= 2;
  if (!any_pair)
    throw DataError(
        fmt::format("cannot draw triplets for condition '{}': no two images share a value", name));
  for (std::int64_t t = 0; t < count;) {
    const std::int64_t anchor = members[rng.below(members.size())];
    const double anchor_value = values[static_cast<std::size_t>(anchor)];
    if (!attribute_known(anchor_value, {})) continue;
    const auto value = static_cast<std::int64_t>(anchor_value);
    const auto& same = groups.at(value);
    if (same.size() < 2) continue;  // no other image shares this value: draw another anchor
    // Uniform over the other images with the anchor's value.
    std::int64_t close = same[rng.below(same.size() - 1)];
    if (close == anchor) close = same.back();
    // Uniform over the images with any other value.
    std::uint64_t r = rng.below(known - same.size());
    std::int64_t far = -1;
    for (const auto& [other_value, items] : groups) {
      if (other_value == value) continue;
      if (r < items.size()) {
        far = items[r];
        break;
      }
      r -= items.size();
    }
    out.push_back({anchor, close, far, condition});
    ++t;
  }
}

// Numeric: known members sorted by value, so the close and far candidates of an anchor are
// contiguous ranges found by binary search.
void draw_numeric(const std::vector<double>& values, const std::vector<std::int64_t>& members,
                  const TripletRule& rule, std::int64_t condition, const std::string& name,
                  std::int64_t count, Rng& rng, std::vector<Triplet>& out) {
  std::vector<std::pair<double, std::int64_t>> sorted;
  for (std::int64_t id : members) {
    const double v = values[static_cast<std::size_t>(id)];
    if (attribute_known(v, rule)) sorted.emplace_back(v, id);
  }
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> sorted_values;
  std::map<std::int64_t, std::size_t> position;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    sorted_values.push_back(sorted[i].first);
    position[sorted[i].second] = i;
  }
  struct Ranges {
    std::size_t close_begin, close_end, far_below, far_above;  // far: [0, below) ∪ [above, n)
    std::size_t closes() const { return close_end - close_begin - 1; }  // minus the anchor
    std::size_t fars(std::size_t n) const { return far_below + (n - far_above); }
  };
  const auto ranges = [&](double v) {
    const auto lower = [&](double x) {
      return static_cast<std::size_t>(
          std::lower_bound(sorted_values.begin(), sorted_values.end(), x) - sorted_values.begin());
    };
    const auto upper = [&](double x) {
      return static_cast<std::size_t>(
          std::upper_bound(sorted_values.begin(), sorted_values.end(), x) - sorted_values.begin());
    };
    return Ranges{lower(v - rule.close_within), upper(v + rule.close_within),
                  lower(v - rule.far_beyond), upper(v + rule.far_beyond)};
  };
  const std::size_t n = sorted.size();
  bool feasible = false;
  for (std::size_t i = 0; i < n && !feasible; ++i) {
    const Ranges r = ranges(sorted_values[i]);
    feasible = r.closes() > 0 && r.fars(n) > 0;
  }
  if (!feasible)
    throw DataError(fmt::format(
        "cannot draw triplets for condition '{}': no image with a known value has another within "
        "close_within = {} of its value and one farther than far_beyond = {}",
        name, rule.close_within, rule.far_beyond));
  for (std::int64_t t = 0; t < count;) {
    const std::int64_t anchor = members[rng.below(members.size())];
    const double v = values[static_cast<std::size_t>(anchor)];
    if (!attribute_known(v, rule)) continue;
    const Ranges r = ranges(v);
    if (r.closes() == 0 || r.fars(n) == 0) continue;
    std::size_t c = r.close_begin + rng.below(r.closes());
    if (c >= position.at(anchor)) ++c;  // skip the anchor itself
    const std::uint64_t f = rng.below(r.fars(n));
    const std::size_t far = f < r.far_below ? f : r.far_above + (f - r.far_below);
    out.push_back({anchor, sorted[c].second, sorted[far].second, condition});
    ++t;
  }
}

}  // namespace

bool attribute_known(double value, const TripletRule& rule) {
  return !std::isnan(value) && (rule.numeric || value >= 0);
}

void draw_condition_triplets(const std::vector<double>& values,
                             const std::vector<std::int64_t>& members, const TripletRule& rule,
                             std::int64_t condition, const std::string& name, std::int64_t count,
                             Rng& rng, std::vector<Triplet>& out) {
  if (count <= 0) return;
  if (rule.numeric && !(rule.far_beyond >= rule.close_within && rule.close_within >= 0))
    throw Error(fmt::format(
        "condition '{}': far_beyond ({}) must be at least close_within ({}), which must be >= 0",
        name, rule.far_beyond, rule.close_within));
  out.reserve(out.size() + static_cast<std::size_t>(count));
  if (rule.numeric)
    draw_numeric(values, members, rule, condition, name, count, rng, out);
  else
    draw_categorical(values, members, condition, name, count, rng, out);
}

std::vector<Triplet> draw_triplets(const std::vector<AttributeColumn>& columns,
                                   const std::vector<std::int64_t>& members,
                                   const std::vector<std::int64_t>& counts, Rng& rng) {
  std::vector<Triplet> out;
  for (std::size_t k = 0; k < columns.size(); ++k)
    draw_condition_triplets(columns[k].values, members, columns[k].rule,
                            static_cast<std::int64_t>(k), columns[k].name, counts[k], rng, out);
  return out;
}

std::vector<std::int64_t> equal_shares(std::int64_t total, std::int64_t parts) {
  std::vector<std::int64_t> shares;
  for (std::int64_t k = 0; k < parts; ++k)
    shares.push_back(total / parts + (k < total % parts));
  return shares;
}

std::pair<at::Tensor, at::Tensor> triplet_tensors(const std::vector<Triplet>& triplets) {
  const auto count = static_cast<std::int64_t>(triplets.size());
  at::Tensor ids = at::empty({count, 3}, at::kLong);
  at::Tensor conditions = at::empty({count}, at::kLong);
  std::int64_t* t = ids.data_ptr<std::int64_t>();
  std::int64_t* c = conditions.data_ptr<std::int64_t>();
  for (const Triplet& x : triplets) {
    *t++ = x.anchor;
    *t++ = x.close;
    *t++ = x.far;
    *c++ = x.condition;
  }
  return {ids, conditions};
}

}  // namespace wscsl
