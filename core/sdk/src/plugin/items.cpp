#include "wscsl/plugin/items.hpp"

#include "wscsl/error.hpp"

namespace wscsl {
namespace {

torch::Tensor moved(const torch::Tensor& t, torch::Device device) {
  return t.defined() ? t.to(device) : t;
}

torch::Tensor selected(const torch::Tensor& t, const torch::Tensor& rows) {
  return t.defined() ? t.index_select(0, rows) : t;
}

torch::Tensor sliced(const torch::Tensor& t, std::int64_t begin, std::int64_t end) {
  return t.defined() ? t.slice(0, begin, end) : t;
}

}  // namespace

ItemFeatures ItemFeatures::rows(const torch::Tensor& rows) const {
  for (const ItemGroup& group : groups)
    if (group.rows.unsafeGetTensorImpl() == rows.unsafeGetTensorImpl()) return *group.features;
  ItemFeatures out{selected(phi, rows), selected(psi, rows), {}, {}};
  for (const auto& [name, t] : texts)
    out.texts[name] = t.index_select(rows);
  return out;
}

ItemFeatures ItemFeatures::to(torch::Device device) const {
  ItemFeatures out{moved(phi, device), moved(psi, device), {}, {}};
  for (const auto& [name, t] : texts)
    out.texts[name] = t.to(device);
  return out;
}

ItemFeatures ItemFeatures::concatenated(const std::vector<ItemFeatures>& parts) {
  if (parts.size() == 1) return parts.front();
  const auto cat = [&](auto&& field) {
    std::vector<torch::Tensor> all;
    for (const ItemFeatures& part : parts)
      all.push_back(field(part));
    return all.empty() || !all.front().defined() ? torch::Tensor() : torch::cat(all);
  };
  ItemFeatures out{cat([](const ItemFeatures& p) { return p.phi; }),
                   cat([](const ItemFeatures& p) { return p.psi; }),
                   {},
                   {}};
  if (parts.empty()) return out;
  for (const auto& [name, first] : parts.front().texts)
    out.texts[name] = {cat([&, n = name](const ItemFeatures& p) { return p.texts.at(n).features; }),
                       cat([&, n = name](const ItemFeatures& p) { return p.texts.at(n).present; })};
  return out;
}

Comparisons Comparisons::triplets(const torch::Tensor& rows) {
  return {rows.select(1, 0), rows.select(1, 1), rows.select(1, 2), {}};
}

Comparisons Comparisons::triplets_by_role(std::int64_t batch, torch::Device device) {
  const torch::Tensor first =
      torch::arange(batch, torch::TensorOptions(device).dtype(torch::kLong));
  return {first, first + batch, first + 2 * batch, {}};
}

Comparisons Comparisons::pairs(torch::Tensor first, torch::Tensor second) {
  return {std::move(first), std::move(second), {}, {}};
}

Comparisons Comparisons::reversed() const {
  if (!are_triplets()) throw Error("only triplets can be reversed: these comparisons are pairs");
  return {first, third, second, conditions};
}

Comparisons Comparisons::slice(std::int64_t begin, std::int64_t end) const {
  return {sliced(first, begin, end), sliced(second, begin, end), sliced(third, begin, end),
          sliced(conditions, begin, end)};
}

Comparisons Comparisons::without_conditions() const {
  return {first, second, third, {}};
}

Comparisons Comparisons::to(torch::Device device) const {
  return {moved(first, device), moved(second, device), moved(third, device),
          moved(conditions, device)};
}

ComparedItems gather(const ItemFeatures& items, const Comparisons& comparisons) {
  ComparedItems out{items.rows(comparisons.first), items.rows(comparisons.second), {}};
  if (comparisons.are_triplets()) out.third = items.rows(comparisons.third);
  return out;
}

}  // namespace wscsl
