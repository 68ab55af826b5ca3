#include "wscsl/plugin/items.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  ItemFeatures out{sliced(items.phi, begin, end), sliced(items.psi, begin, end), {}};
  for (const auto& [name, t] : items.texts)
    out.texts[name] = {t.features.slice(0, begin, end), t.present.slice(0, begin, end)};
  return out;
}

// The features of one member of the comparisons: its block's own (RoleLayout), or its rows.
ItemFeatures member(const ItemBlocks& items, const torch::Tensor& rows, std::int64_t block,
                    std::int64_t begin) {
  const std::vector<ItemFeatures>& blocks = items.blocks();
  if (block < 0 || blocks.size() < 2) return items.by_row().rows(rows);
  if (block >= static_cast<std::int64_t>(blocks.size()))
    throw Error(fmt::format("the comparisons' role layout names block {}, and the items hold {}",
                            block, blocks.size()));
  const ItemFeatures& features = blocks[static_cast<std::size_t>(block)];
  const std::int64_t n = rows.size(0);
  if (begin < 0 || begin + n > features.size())
    throw Error(
        fmt::format("the comparisons' role layout names rows [{}, {}) of block {}, "
                    "which holds {}",
                    begin, begin + n, block, features.size()));
  return begin == 0 && n == features.size() ? features : sliced(features, begin, begin + n);
}

// The names of the text encoders whose features `items` hold.
std::set<std::string> text_names(const ItemFeatures& items) {
  std::set<std::string> names;
  for (const auto& [name, t] : items.texts)
    names.insert(name);
  return names;
}

}  // namespace

ItemFeatures ItemFeatures::rows(const torch::Tensor& rows) const {
  ItemFeatures out{selected(phi, rows), selected(psi, rows), {}};
  for (const auto& [name, t] : texts)
    out.texts[name] = t.index_select(rows);
  return out;
}

ItemFeatures ItemFeatures::to(torch::Device device) const {
  ItemFeatures out{moved(phi, device), moved(psi, device), {}};
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
                   {}};
  if (parts.empty()) return out;
  for (const auto& [name, first] : parts.front().texts)
    out.texts[name] = {cat([&, n = name](const ItemFeatures& p) { return p.texts.at(n).features; }),
                       cat([&, n = name](const ItemFeatures& p) { return p.texts.at(n).present; })};
  return out;
}

struct ItemBlocks::Concatenation {
  std::once_flag made;
  ItemFeatures items;
};

ItemBlocks::ItemBlocks(ItemFeatures items) : blocks_{std::move(items)} {}

ItemBlocks::ItemBlocks(std::vector<ItemFeatures> blocks) : blocks_(std::move(blocks)) {
  for (std::size_t b = 1; b < blocks_.size(); ++b) {
    const ItemFeatures &first = blocks_.front(), &other = blocks_[b];
    if (other.phi.defined() != first.phi.defined() || other.psi.defined() != first.psi.defined() ||
        text_names(other) != text_names(first))
      throw Error(fmt::format(
          "item block {} holds other features than block 0 (φ {} against {}, ψ {} against {}, "
          "text encoders [{}] against [{}]): every block holds the same",
          b, other.phi.defined() ? "set" : "unset", first.phi.defined() ? "set" : "unset",
          other.psi.defined() ? "set" : "unset", first.psi.defined() ? "set" : "unset",
          fmt::join(text_names(other), ", "), fmt::join(text_names(first), ", ")));
  }
  if (blocks_.size() > 1) by_row_ = std::make_shared<Concatenation>();
}

std::int64_t ItemBlocks::size() const {
  std::int64_t rows = 0;
  for (const ItemFeatures& block : blocks_)
    rows += block.size();
  return rows;
}

bool ItemBlocks::has_texts(const std::string& name) const {
  return !blocks_.empty() && blocks_.front().texts.count(name) > 0;
}

const ItemFeatures& ItemBlocks::by_row() const {
  static const ItemFeatures none;
  if (blocks_.empty()) return none;
  if (!by_row_) return blocks_.front();
  std::call_once(by_row_->made, [this] {
    torch::AutoGradMode with_gradient(true);
    by_row_->items = ItemFeatures::concatenated(blocks_);
  });
  return by_row_->items;
}

ItemBlocks ItemBlocks::to(torch::Device device) const {
  std::vector<ItemFeatures> moved;
  for (const ItemFeatures& block : blocks_)
    moved.push_back(block.to(device));
  return ItemBlocks(std::move(moved));
}

Comparisons Comparisons::triplets(const torch::Tensor& rows) {
  return {rows.select(1, 0), rows.select(1, 1), rows.select(1, 2), {}, {}, {}};
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

torch::Tensor HostRows::of(const torch::Tensor& rows) const {
  if (!rows.defined() || rows.device().is_cpu()) return rows;
  for (int m = 0; m < 3; ++m)
    if (moved_[m].defined() && rows.is_same(moved_[m])) return host_[m];
  return {};
}

HostRows HostRows::kept(const Comparisons& before, const Comparisons& after,
                        const std::function<torch::Tensor(const torch::Tensor&)>& derive) {
  const torch::Tensor from[3] = {before.first, before.second, before.third};
  const torch::Tensor made[3] = {after.first, after.second, after.third};
  HostRows kept;
  for (int m = 0; m < 3; ++m)
    if (made[m].defined() && !made[m].device().is_cpu()) {
      kept.host_[m] = derive(before.host.of(from[m]));
      kept.moved_[m] = made[m];
    }
  return kept;
}

Comparisons Comparisons::laid_out(Comparisons c, std::int64_t first, std::int64_t second,
                                  std::int64_t third, std::int64_t begin) {
  c.roles = RoleLayout(first, second, third, begin, c);
  return c;
}

Comparisons Comparisons::triplets_by_role(std::int64_t batch, torch::Device device) {
  const torch::Tensor first =
      torch::arange(batch, torch::TensorOptions(device).dtype(torch::kLong));
  return laid_out({first, first + batch, first + 2 * batch, {}, {}, {}}, 0, 1, 2, 0);
}

Comparisons Comparisons::pairs(torch::Tensor first, torch::Tensor second) {
  return {std::move(first), std::move(second), {}, {}, {}, {}};
}

Comparisons Comparisons::reversed() const {
  if (!are_triplets()) throw Error("only triplets can be reversed: these comparisons are pairs");
  const Comparisons out{first, third, second, conditions, {}, host};
  if (!roles.declared()) return out;
  return laid_out(out, roles.first(), roles.third(), roles.second(), roles.begin());
}

Comparisons Comparisons::slice(std::int64_t begin, std::int64_t end) const {
  Comparisons out{sliced(first, begin, end),
                  sliced(second, begin, end),
                  sliced(third, begin, end),
                  sliced(conditions, begin, end),
                  {},
                  {}};
  out.host = HostRows::kept(*this, out,
                            [&](const torch::Tensor& rows) { return sliced(rows, begin, end); });
  if (!roles.declared()) return out;
  // Tensor::slice clamps its bounds: the layout moves by the rows it kept.
  return laid_out(out, roles.first(), roles.second(), roles.third(),
                  roles.begin() + std::clamp<std::int64_t>(begin, 0, size()));
}

Comparisons Comparisons::without_conditions() const {
  return {first, second, third, {}, roles, host};
}

Comparisons Comparisons::to(torch::Device device) const {
  Comparisons out{moved(first, device),
                  moved(second, device),
                  moved(third, device),
                  moved(conditions, device),
                  {},
                  {}};
  out.host = HostRows::kept(*this, out, [](const torch::Tensor& rows) { return rows; });
  if (!roles.declared()) return out;
  return laid_out(out, roles.first(), roles.second(), roles.third(), roles.begin());
}

ComparedItems gather(const ItemBlocks& items, const Comparisons& comparisons) {
  const RoleLayout& layout = comparisons.roles;
  ComparedItems out{member(items, comparisons.first, layout.first(), layout.begin()),
                    member(items, comparisons.second, layout.second(), layout.begin()),
                    {}};
  if (comparisons.are_triplets())
    out.third = member(items, comparisons.third, layout.third(), layout.begin());
  return out;
}

}  // namespace wscsl
