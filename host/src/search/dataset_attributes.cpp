#include "dataset_attributes.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <torch/types.h>

namespace wscsl::host::search {

ImageAttributes attributes_by_image(Dataset& dataset) {
  const DatasetInfo info = dataset.info();
  ImageAttributes out;
  for (Split split : info.splits) {
    const std::optional<SplitAttributes> a = dataset.attributes(split);
    if (!a || !a->values.defined()) continue;
    const torch::Tensor values = a->values.to(torch::kDouble).contiguous();
    const auto v = values.accessor<double, 2>();
    const std::size_t conditions =
        std::min(info.conditions.size(), static_cast<std::size_t>(values.size(1)));
    for (std::int64_t i = 0; i < values.size(0); ++i) {
      std::vector<std::string> row(info.conditions.size());
      for (std::size_t f = 0; f < conditions; ++f) {
        const double x = v[i][static_cast<std::int64_t>(f)];
        const ConditionInfo& c = info.conditions[f];
        if (std::isnan(x)) continue;
        const auto at = static_cast<std::size_t>(x);
        row[f] =
            c.numeric || x < 0 || at >= c.values.size() ? fmt::format("{:g}", x) : c.values[at];
      }
      const std::string key = a->files.empty()
                                  ? fmt::format("{}/{}", split_name(split), i)
                                  : std::filesystem::weakly_canonical(
                                        a->image_root / a->files[static_cast<std::size_t>(i)])
                                        .string();
      out.emplace(key, std::move(row));
    }
  }
  return out;
}

}  // namespace wscsl::host::search
