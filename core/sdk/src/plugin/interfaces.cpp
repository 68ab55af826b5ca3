// Key functions of the plugin interfaces and their contract checks (the non-virtual halves).
#include <set>

#include <fmt/format.h>

#include "wscsl/error.hpp"
#include "wscsl/plugin/backbone.hpp"
#include "wscsl/plugin/condition_module.hpp"
#include "wscsl/plugin/dataset.hpp"
#include "wscsl/plugin/evaluator.hpp"
#include "wscsl/plugin/loss.hpp"
#include "wscsl/plugin/registrar.hpp"
#include "wscsl/plugin/text_encoder.hpp"
#include "wscsl/util/tensor_text.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl {

std::string shape_of(const at::Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i)
    s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

std::string dtype_and_shape_of(const at::Tensor& t) {
  if (!t.defined()) return shape_of(t);
  return std::string(c10::toString(t.scalar_type())) + " " + shape_of(t);
}

Component::~Component() = default;
Registrar::~Registrar() = default;
Dataset::~Dataset() = default;
Backbone::~Backbone() = default;
TextEncoder::~TextEncoder() = default;
ConditionModule::~ConditionModule() = default;
Loss::~Loss() = default;
Evaluator::~Evaluator() = default;

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::Dataset:
      return "dataset";
    case Kind::Backbone:
      return "backbone";
    case Kind::TextEncoder:
      return "text_encoder";
    case Kind::ConditionModule:
      return "condition_module";
    case Kind::Loss:
      return "loss";
    case Kind::Evaluator:
      return "evaluator";
  }
  return "component";
}

bool parse_kind(std::string_view name, Kind& kind) {
  for (Kind k : kAllKinds) {
    if (kind_name(k) == name) {
      kind = k;
      return true;
    }
  }
  return false;
}

namespace {

std::string who(const Component& c) {
  return c.label().empty() ? std::string(kind_name(c.kind())) : c.label();
}

// Runs plugin code; any exception leaves as a core-owned error that names the component.
template <class F>
auto guarded(const Component& c, const char* call, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw ComponentError(
        fmt::format("{} failed in {}: {}", who(c), call, e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw ComponentError(fmt::format("{} failed in {}: {}", who(c), call, e.what()));
  }
}

[[noreturn]] void broke_contract(const Component& c, const std::string& what) {
  throw ComponentError(fmt::format("{} broke its contract: {}", who(c), what));
}

void expect_shape(const Component& c, const char* name, const at::Tensor& t,
                  std::vector<int64_t> shape) {
  bool ok = t.defined() && t.dim() == static_cast<int64_t>(shape.size());
  for (std::size_t i = 0; ok && i < shape.size(); ++i)
    ok = t.size(static_cast<int64_t>(i)) == shape[i];
  if (!ok) {
    std::string expected = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
      expected += (i ? ", " : "") + std::to_string(shape[i]);
    broke_contract(c, fmt::format("{} has shape {}, expected {}]", name, shape_of(t), expected));
  }
}

// What a component computes with: a floating-point tensor of `shape`.
void expect_floating(const Component& c, const char* name, const at::Tensor& t,
                     std::vector<int64_t> shape) {
  expect_shape(c, name, t, std::move(shape));
  if (!t.is_floating_point())
    broke_contract(
        c, fmt::format("{} is {}, expected a floating-point tensor", name, dtype_and_shape_of(t)));
}

}  // namespace

std::vector<std::string> DatasetInfo::condition_names() const {
  std::vector<std::string> names;
  for (const ConditionInfo& c : conditions)
    names.push_back(c.name);
  return names;
}

bool DatasetInfo::has_split(const std::string& name) const {
  for (const std::string& s : splits)
    if (s == name) return true;
  return false;
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

void check_outfits(const Component& c, const std::string& split, const OutfitData& o, int64_t n,
                   const DatasetInfo& info) {
  const std::string where = fmt::format("split '{}'", split);
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

}  // namespace

const DatasetInfo& Dataset::cached_info() {
  if (!info_) info_ = info();
  return *info_;
}

const SplitData& Dataset::split(const std::string& name) {
  auto it = splits_.find(name);
  if (it != splits_.end()) return it->second;
  const DatasetInfo& described = cached_info();
  if (!described.has_split(name))
    throw ComponentError(fmt::format("{} has no split '{}'", who(*this), name));
  SplitData data = guarded(*this, "load_split", [&] { return load_split(name); });
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
  if (data.outfits) check_outfits(*this, name, *data.outfits, n, described);
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
  return splits_.emplace(name, std::move(data)).first->second;
}

at::Tensor Dataset::epoch_triplets(const std::string& split_name, std::int64_t epoch,
                                   std::uint64_t seed) {
  const SplitData& data = split(split_name);
  at::Tensor drawn = guarded(*this, "draw_epoch_triplets",
                             [&] { return draw_epoch_triplets(split_name, epoch, seed); });
  expect_shape(*this, "epoch triplets", drawn, {data.triplets.size(0), 3});
  if (drawn.scalar_type() != at::kLong) broke_contract(*this, "epoch triplets must be int64");
  if (!drawn.slice(1, 0, 2).equal(data.triplets.slice(1, 0, 2)))
    broke_contract(*this, fmt::format("split '{}': the triplets of epoch {} change an anchor or a "
                                      "close image (only `far` may be drawn afresh)",
                                      split_name, epoch + 1));
  if (drawn.numel() > 0 &&
      (drawn.min().item<int64_t>() < 0 || drawn.max().item<int64_t>() >= data.num_images))
    broke_contract(*this, fmt::format("split '{}': the triplets of epoch {} have image ids "
                                      "outside [0, {})",
                                      split_name, epoch + 1, data.num_images));
  return drawn;
}

at::Tensor Dataset::draw_epoch_triplets(const std::string& split_name, std::int64_t,
                                        std::uint64_t) {
  return split(split_name).triplets;
}

std::optional<SplitAttributes> Dataset::attributes(const std::string& split) {
  const DatasetInfo& described = cached_info();
  if (!described.has_split(split))
    throw ComponentError(fmt::format("{} has no split '{}'", who(*this), split));
  std::optional<SplitAttributes> a =
      guarded(*this, "load_attributes", [&] { return load_attributes(split); });
  if (!a) return a;
  const int64_t f = described.num_conditions();
  if (!a->values.defined() || a->values.dim() != 2 || a->values.size(1) != f ||
      a->values.scalar_type() != at::kDouble)
    broke_contract(*this, fmt::format("split '{}' attribute values must be float64 [N, {}], got {}",
                                      split, f, shape_of(a->values)));
  const int64_t n = a->values.size(0);
  if (!a->files.empty() && static_cast<int64_t>(a->files.size()) != n)
    broke_contract(
        *this, fmt::format("split '{}' names {} files for {} images", split, a->files.size(), n));
  if (!a->members.defined() || a->members.dim() != 1 || a->members.scalar_type() != at::kLong)
    broke_contract(*this, fmt::format("split '{}' members must be int64 [M], got {}", split,
                                      shape_of(a->members)));
  if (a->members.numel() > 0 &&
      (a->members.min().item<int64_t>() < 0 || a->members.max().item<int64_t>() >= n))
    broke_contract(*this, fmt::format("split '{}' has member ids outside [0, {})", split, n));
  return a;
}

std::optional<SplitAttributes> Dataset::load_attributes(const std::string&) {
  return std::nullopt;
}

at::Tensor Dataset::images(const std::string& split, const at::Tensor& ids,
                           const ImageRequest& request) {
  if (!ids.defined() || ids.dim() != 1 || ids.scalar_type() != at::kLong)
    throw ComponentError(
        fmt::format("{}: image ids must be a 1-D int64 tensor, got {}", who(*this), shape_of(ids)));
  at::Tensor out = guarded(*this, "load_images", [&] { return load_images(split, ids, request); });
  const DatasetInfo& d = cached_info();
  expect_shape(*this, "images", out, {ids.size(0), d.channels, d.height, d.width});
  if (out.scalar_type() != at::kFloat) broke_contract(*this, "images must be float32");
  return out;
}

torch::Tensor Backbone::embed(const torch::Tensor& images) {
  if (!images.defined() || images.dim() != 4)
    throw ComponentError(
        fmt::format("{}: expected images [B, C, H, W], got {}", who(*this), shape_of(images)));
  torch::Tensor out = guarded(*this, "forward", [&] { return forward_images(images); });
  expect_floating(*this, "the embedding", out, {images.size(0), embedding_dim()});
  return out;
}

TextFeatures TextFeatures::index_select(const torch::Tensor& rows) const {
  return {features.index_select(0, rows), present.index_select(0, rows)};
}

TextFeatures TextFeatures::to(torch::Device device) const {
  return {features.to(device), present.to(device)};
}

TextFeatures TextEncoder::encode(const std::vector<std::string>& texts) {
  const auto b = static_cast<int64_t>(texts.size());
  TextFeatures out = guarded(*this, "encode", [&] { return encode_impl(texts); });
  expect_floating(*this, "the text features", out.features, {b, output_dim()});
  torch::Tensor non_empty = torch::empty({b}, torch::kBool);
  for (int64_t i = 0; i < b; ++i)
    non_empty[i] = !texts[static_cast<std::size_t>(i)].empty();
  non_empty = non_empty.to(out.features.device());
  if (out.present.defined()) {
    expect_shape(*this, "present", out.present, {b});
    if (out.present.scalar_type() != torch::kBool)
      broke_contract(*this,
                     fmt::format("present is {}, expected bool", dtype_and_shape_of(out.present)));
    out.present = out.present.to(out.features.device()) & non_empty;
  } else {
    out.present = non_empty;
  }
  // A NaN of a present text would surface as a non-finite loss, blamed on the learning rate.
  const torch::Tensor finite = torch::isfinite(out.features).all(1) | ~out.present;
  if (!finite.all().item<bool>()) {
    const auto row = finite.logical_not().nonzero()[0][0].item<std::int64_t>();
    broke_contract(*this, fmt::format("the text features of {} (text {} of the batch) hold a "
                                      "non-finite value; expected finite features for every "
                                      "present text",
                                      quoted_excerpt(texts[static_cast<std::size_t>(row)]), row));
  }
  out.features = out.features * out.present.unsqueeze(1).to(out.features.scalar_type());
  return out;
}

TripletInput TripletInput::reversed() const {
  TripletInput r = *this;
  std::swap(r.phi_close, r.phi_far);
  std::swap(r.psi_close, r.psi_far);
  for (auto& [name, t] : r.texts)
    std::swap(t.close, t.far);
  return r;
}

TripletInput TripletInput::to(torch::Device device) const {
  const auto moved = [&](const torch::Tensor& t) { return t.defined() ? t.to(device) : t; };
  TripletInput r;
  r.phi_anchor = moved(phi_anchor);
  r.phi_close = moved(phi_close);
  r.phi_far = moved(phi_far);
  r.psi_anchor = moved(psi_anchor);
  r.psi_close = moved(psi_close);
  r.psi_far = moved(psi_far);
  r.conditions = moved(conditions);
  for (const auto& [name, t] : texts)
    r.texts[name] = {t.anchor.to(device), t.close.to(device), t.far.to(device)};
  return r;
}

torch::Tensor ConditionModule::embed(const torch::Tensor& phi) {
  if (!phi.defined() || phi.dim() != 2)
    throw ComponentError(fmt::format("{}: expected φ [B, D], got {}", who(*this), shape_of(phi)));
  torch::Tensor psi = guarded(*this, "embed", [&] { return embed_impl(phi); });
  expect_floating(*this, "ψ", psi, {phi.size(0), num_embeddings(), output_dim()});
  return psi;
}

TripletScores ConditionModule::score(const TripletInput& input) {
  const int64_t b = input.phi_anchor.defined() ? input.phi_anchor.size(0) : -1;
  if (supervision() == Supervision::Conditioned && !input.conditions.defined())
    throw ComponentError(
        fmt::format("{} needs the condition of every triplet, and this dataset split provides none",
                    who(*this)));
  for (const std::string& name : contract().needed_names(Resource::TextFeatures))
    if (!input.texts.count(name))
      throw ComponentError(fmt::format("{} needs {}, and its input has none", who(*this),
                                       describe_resource(Resource::TextFeatures, name)));
  TripletScores s = guarded(*this, "score", [&] { return score_impl(input); });
  const int64_t k = num_embeddings();
  expect_floating(*this, "close_distances", s.close_distances, {b, k});
  expect_floating(*this, "far_distances", s.far_distances, {b, k});
  expect_floating(*this, "weights", s.weights, {b, k});
  expect_floating(*this, "fused_close", s.fused_close, {b});
  expect_floating(*this, "fused_far", s.fused_far, {b});
  const std::vector<std::string> declared_list = contract().provided_names(Resource::AuxTerm);
  const std::set<std::string> declared(declared_list.begin(), declared_list.end());
  std::set<std::string> given;
  for (const auto& [name, value] : s.aux) {
    given.insert(name);
    expect_floating(*this, ("aux term '" + name + "'").c_str(), value, {b});
  }
  if (given != declared)
    broke_contract(*this, fmt::format("it returned the aux terms [{}] but declares [{}]",
                                      join({given.begin(), given.end()}, ", "),
                                      join({declared.begin(), declared.end()}, ", ")));
  return s;
}

torch::Tensor ConditionModule::distances(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  if (!psi_a.defined() || psi_a.dim() != 3 || !psi_a.sizes().equals(psi_b.sizes()))
    throw ComponentError(
        fmt::format("{}: distances need two ψ of equal shape [B, K, E], got {} "
                    "and {}",
                    who(*this), shape_of(psi_a), shape_of(psi_b)));
  torch::Tensor d = guarded(*this, "distances", [&] { return distances_impl(psi_a, psi_b); });
  expect_floating(*this, "distances", d, {psi_a.size(0), psi_a.size(1)});
  return d;
}

torch::Tensor ConditionModule::distances_impl(const torch::Tensor& psi_a,
                                              const torch::Tensor& psi_b) {
  return (psi_a - psi_b).norm(2, {-1});
}

std::map<std::string, torch::Tensor> Loss::compute(const LossInput& input) {
  for (const Need& need : contract().needs) {
    const bool met = need.resource == Resource::ReversedScores   ? input.reversed != nullptr
                     : need.resource == Resource::TrainingImages ? input.images != nullptr
                     : need.resource == Resource::AuxTerm ? input.scores.aux.count(need.name) > 0
                     : need.resource == Resource::TextFeatures
                         ? input.triplets.texts.count(need.name) > 0
                         : true;
    if (!met)
      throw ComponentError(fmt::format("{} needs {}, and its input has none", who(*this),
                                       describe_resource(need.resource, need.name)));
  }
  auto terms = guarded(*this, "compute", [&] { return compute_impl(input); });
  if (terms.empty()) broke_contract(*this, "a loss must return at least one term");
  for (const auto& [name, value] : terms) {
    if (!value.defined() || value.numel() != 1 || !value.is_floating_point())
      broke_contract(*this, fmt::format("term '{}' must be a floating-point scalar, got {}", name,
                                        dtype_and_shape_of(value)));
  }
  return terms;
}

torch::Tensor EmbeddingTable::rows_of(const torch::Tensor& ids) const {
  const torch::Tensor flat = ids.reshape({-1});
  const torch::Tensor rows =
      torch::searchsorted(image_ids, flat).clamp_max(std::max<int64_t>(image_ids.size(0) - 1, 0));
  if (flat.numel() > 0 && (image_ids.numel() == 0 || !image_ids.index_select(0, rows).equal(flat)))
    throw ComponentError(
        fmt::format("split '{}': an image id has no row in the embedding table (only images that "
                    "the split's triplets and outfits reference are embedded)",
                    split));
  return rows.reshape(ids.sizes());
}

TripletInput EmbeddingTable::gather(const torch::Tensor& anchor, const torch::Tensor& close,
                                    const torch::Tensor& far) const {
  TripletInput in;
  in.phi_anchor = phi.index_select(0, anchor);
  in.phi_close = phi.index_select(0, close);
  in.phi_far = phi.index_select(0, far);
  in.psi_anchor = psi.index_select(0, anchor);
  in.psi_close = psi.index_select(0, close);
  in.psi_far = psi.index_select(0, far);
  for (const auto& [name, t] : texts)
    in.texts[name] = {t.index_select(anchor), t.index_select(close), t.index_select(far)};
  return in;
}

EvalReport Evaluator::evaluate(EvalContext& context) {
  EvalReport report = guarded(*this, "evaluate", [&] { return evaluate_impl(context); });
  std::set<std::string> declared;
  for (const MetricSpec& m : contract().metrics)
    for (const std::string& name : expand_metric_name(m.name, context.info.condition_names()))
      declared.insert(name);
  for (const Metric& m : report.metrics)
    if (!declared.count(m.name))
      broke_contract(
          *this,
          fmt::format("it reported the metric '{}', which its contract does not declare", m.name));
  return report;
}

}  // namespace wscsl
