#include "wscsl/data/labelled_images.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <fmt/format.h>

namespace wscsl {
namespace {

std::vector<double> distinct_known(const AttributeColumn& column) {
  std::vector<double> values;
  for (double v : column.values)
    if (attribute_known(v, column.rule)) values.push_back(v);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

std::int64_t LabelledImages::num_images() const {
  return columns.empty() ? 0 : static_cast<std::int64_t>(columns.front().values.size());
}

std::vector<ConditionInfo> LabelledImages::conditions() const {
  std::vector<ConditionInfo> out;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    ConditionInfo c;
    c.name = columns[k].name;
    c.numeric = columns[k].rule.numeric;
    c.values = c.numeric ? numeric_values(k) : value_names[k];
    out.push_back(std::move(c));
  }
  return out;
}

at::Tensor LabelledImages::factors() const {
  const std::int64_t n = num_images();
  const auto f = static_cast<std::int64_t>(columns.size());
  at::Tensor out = at::empty({n, f}, at::kLong);
  std::int64_t* p = out.data_ptr<std::int64_t>();
  for (std::int64_t k = 0; k < f; ++k) {
    const AttributeColumn& column = columns[static_cast<std::size_t>(k)];
    const std::vector<double> distinct =
        column.rule.numeric ? distinct_known(column) : std::vector<double>();
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = column.values[static_cast<std::size_t>(i)];
      std::int64_t label = -1;
      if (attribute_known(v, column.rule))
        label = column.rule.numeric
                    ? std::lower_bound(distinct.begin(), distinct.end(), v) - distinct.begin()
                    : static_cast<std::int64_t>(v);
      p[i * f + k] = label;
    }
  }
  return out;
}

std::vector<std::string> LabelledImages::numeric_values(std::size_t column) const {
  std::vector<std::string> out;
  for (double v : distinct_known(columns[column]))
    out.push_back(fmt::format("{}", v));
  return out;
}

SplitData LabelledImages::draw_split(const std::vector<std::int64_t>& members, std::int64_t total,
                                     std::uint64_t seed) const {
  Rng rng(seed);
  std::vector<Triplet> drawn = draw_triplets(
      columns, members, equal_shares(total, static_cast<std::int64_t>(columns.size())), rng);
  rng.shuffle(drawn);
  SplitData data;
  data.num_images = num_images();
  std::tie(data.triplets, data.conditions) = triplet_tensors(drawn);
  data.factors = factors();
  return data;
}

SplitAttributes LabelledImages::attributes(Split split, const ImageList& images) const {
  SplitAttributes a;
  a.image_root = images.folder;
  for (const ImageEntry& e : images.entries)
    a.files.push_back(e.file);
  const std::int64_t n = num_images();
  const auto f = static_cast<std::int64_t>(columns.size());
  a.values = at::empty({n, f}, at::kDouble);
  double* v = a.values.data_ptr<double>();
  for (std::int64_t k = 0; k < f; ++k)
    for (std::int64_t i = 0; i < n; ++i)
      v[i * f + k] = columns[static_cast<std::size_t>(k)].values[static_cast<std::size_t>(i)];
  const std::vector<std::int64_t>& ids = this->members.at(split);
  a.members = at::empty({static_cast<std::int64_t>(ids.size())}, at::kLong);
  std::copy(ids.begin(), ids.end(), a.members.data_ptr<std::int64_t>());
  return a;
}

}  // namespace wscsl
