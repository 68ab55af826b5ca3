#include "wscsl/plugin/items.hpp"

#include <algorithm>

#include <fmt/format.h>

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

// Rows [begin, end) of `items`.
ItemFeatures sliced(const ItemFeatures& items, std::int64_t begin, std::int64_t end) {
  ItemFeatures out{sliced(items.phi, begin, end), sliced(items.psi, begin, end), {}, {}};
  for (const auto& [name, t] : items.texts)
    out.texts[name] = {t.features.slice(0, begin, end), t.present.slice(0, begin, end)};
  return out;
}

// The features of one member of the comparisons: its block's own (RoleLayout), or its rows.
ItemFeatures member(const ItemFeatures& items, const torch::Tensor& rows, std::int64_t block,
                    std::int64_t begin) {
  if (block < 0 || items.blocks.empty()) return items.rows(rows);
  if (block >= static_cast<std::int64_t>(items.blocks.size()))
    throw Error(fmt::format("the comparisons' role layout names block {}, and the items hold {}",
                            block, items.blocks.size()));
  const ItemFeatures& features = items.blocks[static_cast<std::size_t>(block)];
  const std::int64_t n = rows.size(0);
  if (begin < 0 || begin + n > features.size())
    throw Error(
        fmt::format("the comparisons' role layout names rows [{}, {}) of block {}, "
                    "which holds {}",
                    begin, begin + n, block, features.size()));
  return begin == 0 && n == features.size() ? features : sliced(features, begin, begin + n);
}

}  // namespace

ItemFeatures ItemFeatures::rows(const torch::Tensor& rows) const {
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
  return {rows.select(1, 0), rows.select(1, 1), rows.select(1, 2), {}, {}};
}

RoleLayout::RoleLayout(std::int64_t first, std::int64_t second, std::int64_t third,
                       std::int64_t begin, const Comparisons& rows)
    : first_(first),
      second_(second),
      third_(third),
      begin_(begin),
      rows_{rows.first, rows.second, rows.third} {}

bool RoleLayout::holds_rows_of(const Comparisons& c) const {
  return c.first.is_same(rows_[0]) && c.second.is_same(rows_[1]) && c.third.is_same(rows_[2]);
}

Comparisons Comparisons::laid_out(Comparisons c, std::int64_t first, std::int64_t second,
                                  std::int64_t third, std::int64_t begin) {
  c.roles = RoleLayout(first, second, third, begin, c);
  return c;
}

Comparisons Comparisons::triplets_by_role(std::int64_t batch, torch::Device device) {
  const torch::Tensor first =
      torch::arange(batch, torch::TensorOptions(device).dtype(torch::kLong));
  return laid_out({first, first + batch, first + 2 * batch, {}, {}}, 0, 1, 2, 0);
}

Comparisons Comparisons::pairs(torch::Tensor first, torch::Tensor second) {
  return {std::move(first), std::move(second), {}, {}, {}};
}

Comparisons Comparisons::reversed() const {
  if (!are_triplets()) throw Error("only triplets can be reversed: these comparisons are pairs");
  const Comparisons out{first, third, second, conditions, {}};
  if (!roles.declared()) return out;
  return laid_out(out, roles.first(), roles.third(), roles.second(), roles.begin());
}

Comparisons Comparisons::slice(std::int64_t begin, std::int64_t end) const {
  const Comparisons out{sliced(first, begin, end),
                        sliced(second, begin, end),
                        sliced(third, begin, end),
                        sliced(conditions, begin, end),
                        {}};
  if (!roles.declared()) return out;
  // Tensor::slice clamps its bounds: the layout moves by the rows it kept.
  return laid_out(out, roles.first(), roles.second(), roles.third(),
                  roles.begin() + std::clamp<std::int64_t>(begin, 0, size()));
}

Comparisons Comparisons::without_conditions() const {
  return {first, second, third, {}, roles};
}

Comparisons Comparisons::to(torch::Device device) const {
  const Comparisons out{moved(first, device),
                        moved(second, device),
                        moved(third, device),
                        moved(conditions, device),
                        {}};
  if (!roles.declared()) return out;
  return laid_out(out, roles.first(), roles.second(), roles.third(), roles.begin());
}

ComparedItems gather(const ItemFeatures& items, const Comparisons& comparisons) {
  const RoleLayout& layout = comparisons.roles;
  ComparedItems out{member(items, comparisons.first, layout.first(), layout.begin()),
                    member(items, comparisons.second, layout.second(), layout.begin()),
                    {}};
  if (comparisons.are_triplets())
    out.third = member(items, comparisons.third, layout.third(), layout.begin());
  return out;
}

}  // namespace wscsl
