// The non-virtual half of Dataset: what a dataset returns is checked before anything reads it.
#include <algorithm>
#include <set>

#include <ATen/TensorOperators.h>

#include "checks.hpp"
#include "wscsl/plugin/dataset.hpp"

namespace wscsl {

using detail::broke_contract;
using detail::expect_shape;
using detail::guarded;
using detail::who;

Dataset::~Dataset() = default;

std::vector<std::string> DatasetInfo::condition_names() const {
  std::vector<std::string> names;
  for (const ConditionInfo& c : conditions)
    names.push_back(c.name);
  return names;
}

std::string_view split_name(Split split) {
  switch (split) {
    case Split::Train:
      return "train";
    case Split::Val:
      return "val";
    case Split::Test:
      return "test";
  }
  return "split";
}

bool parse_split(std::string_view name, Split& split) {
  for (Split s : kAllSplits) {
    if (split_name(s) == name) {
      split = s;
      return true;
    }
  }
  return false;
}

bool DatasetInfo::has_split(Split split) const {
  return std::find(splits.begin(), splits.end(), split) != splits.end();
}

namespace {

void check_ids(const Component& c, const std::string& what, const at::Tensor& ids, int64_t n) {
  if (ids.numel() > 0 && (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= n))
    broke_contract(c, fmt::format("{} has image ids outside [0, {})", what, n));
}

void check_id_lists(const Component& c, const std::string& what, const IdLists& lists, int64_t n) {
  if (!lists.offsets.defined() || lists.offsets.dim() != 1 || lists.offsets.size(0) < 1 ||
      lists.offsets.scalar_type() != at::kLong)
    broke_contract(
        c, fmt::format("{} offsets must be int64 [L + 1], got {}", what, shape_of(lists.offsets)));
  const int64_t total = lists.offsets[-1].item<int64_t>();
  if (lists.offsets[0].item<int64_t>() != 0 ||
      (lists.offsets.size(0) > 1 &&
       (lists.offsets.slice(0, 1) < lists.offsets.slice(0, 0, -1)).any().item<bool>()))
    broke_contract(c, fmt::format("{} offsets must start at 0 and never decrease", what));
  expect_shape(c, (what + " items").c_str(), lists.items, {total});
  if (lists.items.scalar_type() != at::kLong)
    broke_contract(c, fmt::format("{} items must be int64", what));
  check_ids(c, what, lists.items, n);
}

void check_outfits(const Component& c, Split split, const OutfitData& o, int64_t n,
                   const DatasetInfo& info) {
  const std::string where = fmt::format("split '{}'", split_name(split));
  const auto types = static_cast<int64_t>(info.item_types.size());
  expect_shape(c, "item types", o.item_types, {n});
  if (o.item_types.scalar_type() != at::kLong) broke_contract(c, "item types must be int64");
  if (n > 0 &&
      (o.item_types.min().item<int64_t>() < -1 || o.item_types.max().item<int64_t>() >= types))
    broke_contract(c, fmt::format("{} has item types outside [-1, {})", where, types));
  expect_shape(c, "type-pair conditions", o.type_pair_conditions, {types, types});
  if (o.type_pair_conditions.scalar_type() != at::kLong ||
      !o.type_pair_conditions.equal(o.type_pair_conditions.t()))
    broke_contract(c, "type-pair conditions must be a symmetric int64 matrix");
  if (types > 0 && (o.type_pair_conditions.min().item<int64_t>() < 0 ||
                    o.type_pair_conditions.max().item<int64_t>() >= info.num_conditions()))
    broke_contract(c,
                   fmt::format("type-pair conditions must lie in [0, {})", info.num_conditions()));
  check_id_lists(c, where + " compatibility lines", o.compatibility.outfits, n);
  expect_shape(c, "compatibility labels", o.compatibility.labels, {o.compatibility.outfits.size()});
  if (o.compatibility.labels.numel() > 0 && (o.compatibility.labels.min().item<int64_t>() < 0 ||
                                             o.compatibility.labels.max().item<int64_t>() > 1))
    broke_contract(c, fmt::format("{} compatibility labels must be 0 or 1", where));
  const BlankQuestions& b = o.blanks;
  check_id_lists(c, where + " fill-in-the-blank questions", b.questions, n);
  const int64_t q = b.questions.size();
  if (!b.candidates.defined() || b.candidates.dim() != 2 || b.candidates.size(0) != q ||
      b.candidates.scalar_type() != at::kLong)
    broke_contract(c, fmt::format("{} candidates must be int64 [{}, A], got {}", where, q,
                                  shape_of(b.candidates)));
  check_ids(c, where + " candidates", b.candidates, n);
  expect_shape(c, "answers", b.answers, {q});
  if (q > 0 && (b.answers.min().item<int64_t>() < 0 ||
                b.answers.max().item<int64_t>() >= b.candidates.size(1)))
    broke_contract(c, fmt::format("{} answers must be columns of the candidates", where));
  expect_shape(c, "blank positions", b.blank_positions, {q});
}

void check_attribute_lines(const Component& c, const std::string& what, const at::Tensor& lines,
                           int64_t n, const DatasetInfo& info) {
  if (!lines.defined() || lines.dim() != 2 || lines.size(1) != 3 ||
      lines.scalar_type() != at::kLong)
    broke_contract(c, fmt::format("{} must be int64 [L, 3], got {}", what, shape_of(lines)));
  const int64_t count = lines.size(0);
  if (count == 0) return;
  check_ids(c, what, lines.select(1, 0), n);
  const at::Tensor conditions = lines.select(1, 1);
  if (conditions.min().item<int64_t>() < 0 ||
      conditions.max().item<int64_t>() >= info.num_conditions())
    broke_contract(c,
                   fmt::format("{} has conditions outside [0, {})", what, info.num_conditions()));
  const at::Tensor line = lines.contiguous();
  const int64_t* v = line.data_ptr<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    const auto& values = info.conditions[static_cast<std::size_t>(v[3 * i + 1])].values;
    if (v[3 * i + 2] < 0 || v[3 * i + 2] >= static_cast<int64_t>(values.size()))
      broke_contract(c, fmt::format("{} line {} has the value {} of condition '{}', outside [0, "
                                    "{})",
                                    what, i + 1, v[3 * i + 2],
                                    info.conditions[static_cast<std::size_t>(v[3 * i + 1])].name,
                                    values.size()));
  }
}

}  // namespace

const DatasetInfo& Dataset::cached_info() {
  if (!info_) info_ = info();
  return *info_;
}

const SplitData& Dataset::split(Split split) {
  auto it = splits_.find(split);
  if (it != splits_.end()) return it->second;
  const std::string_view name = split_name(split);
  const DatasetInfo& described = cached_info();
  if (!described.has_split(split))
    throw ComponentError(fmt::format("{} has no split '{}'", who(*this), name));
  SplitData data = guarded(*this, "load_split", [&] { return load_split(split); });
  const int64_t n = data.num_images;
  if (!data.triplets.defined() || data.triplets.dim() != 2 || data.triplets.size(1) != 3 ||
      data.triplets.scalar_type() != at::kLong)
    broke_contract(*this, fmt::format("split '{}' triplets must be int64 [T, 3], got {}", name,
                                      shape_of(data.triplets)));
  if (data.triplets.numel() > 0 &&
      (data.triplets.min().item<int64_t>() < 0 || data.triplets.max().item<int64_t>() >= n))
    broke_contract(*this, fmt::format("split '{}' has triplet image ids outside [0, {})", name, n));
  const int64_t t = data.triplets.size(0);
  const int64_t f = described.num_conditions();
  if (data.conditions.defined()) {
    expect_shape(*this, "triplet conditions", data.conditions, {t});
    if (t > 0 &&
        (data.conditions.min().item<int64_t>() < -1 || data.conditions.max().item<int64_t>() >= f))
      broke_contract(*this,
                     fmt::format("split '{}' has triplet conditions outside [-1, {})", name, f));
  }
  if (data.factors.defined()) expect_shape(*this, "factors", data.factors, {n, f});
  if (data.reversed.defined()) {
    expect_shape(*this, "reversed flags", data.reversed, {t});
    if (data.reversed.scalar_type() != at::kBool)
      broke_contract(*this, "reversed flags must be bool");
  }
  if (data.outfits) check_outfits(*this, split, *data.outfits, n, described);
  if (data.attribute_queries) {
    const std::string where = fmt::format("split '{}'", name);
    check_attribute_lines(*this, where + " query lines", data.attribute_queries->queries, n,
                          described);
    check_attribute_lines(*this, where + " candidate lines", data.attribute_queries->candidates, n,
                          described);
  }
  std::set<std::string> fields(described.text_fields.begin(), described.text_fields.end());
  for (const auto& [field, texts] : data.texts) {
    if (!fields.erase(field))
      broke_contract(*this, fmt::format("split '{}' has the text field '{}', which info() does "
                                        "not declare",
                                        name, field));
    if (static_cast<int64_t>(texts.size()) != n)
      broke_contract(*this, fmt::format("split '{}' has {} texts in field '{}', expected one per "
                                        "image ({})",
                                        name, texts.size(), field, n));
  }
  if (!fields.empty())
    broke_contract(*this, fmt::format("split '{}' has no texts in the declared field '{}'", name,
                                      *fields.begin()));
  return splits_.emplace(split, std::move(data)).first->second;
}

at::Tensor Dataset::epoch_triplets(Split split, std::int64_t epoch, std::uint64_t seed) {
  const SplitData& data = this->split(split);
  at::Tensor drawn = guarded(*this, "draw_epoch_triplets",
                             [&] { return draw_epoch_triplets(split, epoch, seed); });
  expect_shape(*this, "epoch triplets", drawn, {data.triplets.size(0), 3});
  if (drawn.scalar_type() != at::kLong) broke_contract(*this, "epoch triplets must be int64");
  if (drawn.numel() > 0 &&
      (drawn.min().item<int64_t>() < 0 || drawn.max().item<int64_t>() >= data.num_images))
    broke_contract(*this, fmt::format("split '{}': the triplets of epoch {} have image ids "
                                      "outside [0, {})",
                                      split_name(split), epoch + 1, data.num_images));
  return drawn;
}

at::Tensor Dataset::draw_epoch_triplets(Split split, std::int64_t, std::uint64_t) {
  return this->split(split).triplets;
}

std::optional<SplitAttributes> Dataset::attributes(Split split) {
  const std::string_view name = split_name(split);
  const DatasetInfo& described = cached_info();
  if (!described.has_split(split))
    throw ComponentError(fmt::format("{} has no split '{}'", who(*this), name));
  std::optional<SplitAttributes> a =
      guarded(*this, "load_attributes", [&] { return load_attributes(split); });
  if (!a) return a;
  const int64_t f = described.num_conditions();
  if (!a->values.defined() || a->values.dim() != 2 || a->values.size(1) != f ||
      a->values.scalar_type() != at::kDouble)
    broke_contract(*this, fmt::format("split '{}' attribute values must be float64 [N, {}], got {}",
                                      name, f, shape_of(a->values)));
  const int64_t n = a->values.size(0);
  if (!a->files.empty() && static_cast<int64_t>(a->files.size()) != n)
    broke_contract(
        *this, fmt::format("split '{}' names {} files for {} images", name, a->files.size(), n));
  if (!a->members.defined() || a->members.dim() != 1 || a->members.scalar_type() != at::kLong)
    broke_contract(*this, fmt::format("split '{}' members must be int64 [M], got {}", name,
                                      shape_of(a->members)));
  if (a->members.numel() > 0 &&
      (a->members.min().item<int64_t>() < 0 || a->members.max().item<int64_t>() >= n))
    broke_contract(*this, fmt::format("split '{}' has member ids outside [0, {})", name, n));
  return a;
}

std::optional<SplitAttributes> Dataset::load_attributes(Split) {
  return std::nullopt;
}

at::Tensor Dataset::images(Split split, const at::Tensor& ids, const ImageRequest& request) {
  if (!ids.defined() || ids.dim() != 1 || ids.scalar_type() != at::kLong)
    throw ComponentError(
        fmt::format("{}: image ids must be a 1-D int64 tensor, got {}", who(*this), shape_of(ids)));
  at::Tensor out = guarded(*this, "load_images", [&] { return load_images(split, ids, request); });
  const DatasetInfo& d = cached_info();
  expect_shape(*this, "images", out, {ids.size(0), d.channels, d.height, d.width});
  if (out.scalar_type() != at::kFloat) broke_contract(*this, "images must be float32");
  return out;
}

}  // namespace wscsl
