// The non-virtual half of ConditionModule: what it is given and what it returns are checked.
#include <algorithm>
#include <set>

#include "checks.hpp"
#include "wscsl/plugin/condition_module.hpp"
#include "wscsl/util/text.hpp"

namespace wscsl {

using detail::broke_contract;
using detail::expect_floating;
using detail::guarded;
using detail::who;

ConditionModule::~ConditionModule() = default;

namespace {

void check_long_vector(const Component& c, const char* name, const torch::Tensor& t, int64_t b) {
  if (!t.defined() || t.dim() != 1 || t.size(0) != b || t.scalar_type() != at::kLong)
    throw ComponentError(fmt::format("{}: the comparisons' {} must be int64 [{}], got {}", who(c),
                                     name, b, dtype_and_shape_of(t)));
}

// Item rows [B] int64 within [0, items). Their values are read on the host only: where they are
// on the CPU, or from the host copy Comparisons::to kept of them (HostRows). Rows made on an
// accelerator are not read (that would wait for the device, a host sync per member and step);
// the indexing that gathers them checks them there.
void check_rows(const Component& c, const char* name, const torch::Tensor& rows,
                const HostRows& host, int64_t b, int64_t items) {
  check_long_vector(c, (std::string(name) + " rows").c_str(), rows, b);
  const torch::Tensor on_host = host.of(rows);
  if (!on_host.defined()) return;
  const torch::Tensor flat = on_host.contiguous();
  const int64_t* row = flat.data_ptr<int64_t>();
  const int64_t* bad = std::find_if(row, row + b, [&](int64_t r) { return r < 0 || r >= items; });
  if (bad != row + b)
    throw ComponentError(fmt::format(
        "{}: the comparisons' {} rows must lie in [0, {}), the items, and comparison {} names "
        "row {}",
        who(c), name, items, bad - row, *bad));
}

// Rows [B] of one member of the comparisons: with a block of the role layout over items in more
// than one block, rows [begin, begin + B) of that block, which the items must hold (what gather()
// hands over; the layout names the rows it holds, checked once for all members by check_layout);
// otherwise any rows of the items.
void check_member(const Component& c, const char* name, const torch::Tensor& rows,
                  const Comparisons& comparisons, const ItemBlocks& items, int64_t block) {
  const int64_t b = comparisons.size(), begin = comparisons.roles.begin();
  const std::vector<ItemFeatures>& in = items.blocks();
  if (block < 0 || in.size() < 2)
    return check_rows(c, name, rows, comparisons.host, b, items.size());
  check_long_vector(c, (std::string(name) + " rows").c_str(), rows, b);
  const int64_t blocks = static_cast<int64_t>(in.size());
  if (block >= blocks || begin < 0 || begin + b > in[static_cast<std::size_t>(block)].size())
    throw ComponentError(fmt::format(
        "{}: the comparisons' role layout names rows [{}, {}) of block {} for their {} items, "
        "and the items hold {} blocks{}",
        who(c), begin, begin + b, block, name, blocks,
        block < blocks
            ? fmt::format(" (that one of {} rows)", in[static_cast<std::size_t>(block)].size())
            : ""));
}

// A declared role layout is trusted without reading a row: it holds the row tensors it was
// declared with (Comparisons keeps them together), so rows replaced since are refused here.
void check_layout(const Component& c, const Comparisons& comparisons) {
  const RoleLayout& layout = comparisons.roles;
  if (!layout.declared() || layout.holds_rows_of(comparisons)) return;
  throw ComponentError(fmt::format(
      "{}: the comparisons' rows are not the ones their role layout was declared with (blocks "
      "{}, {}, {} from row {}); comparisons laid out by role come from "
      "Comparisons::triplets_by_role and keep their layout through reversed(), slice() and to(): "
      "make comparisons of other rows with Comparisons::triplets or pairs",
      who(c), layout.first(), layout.second(), layout.third(), layout.begin()));
}

void check_input(const ConditionModule& m, const ItemBlocks& items, const Comparisons& c) {
  const int64_t b = c.size();
  const RoleLayout& layout = c.roles;
  check_layout(m, c);
  check_member(m, "first", c.first, c, items, layout.first());
  check_member(m, "second", c.second, c, items, layout.second());
  if (c.are_triplets()) {
    check_member(m, "third", c.third, c, items, layout.third());
  } else if (!m.contract().provides_resource(Resource::PairScores, "")) {
    throw ComponentError(fmt::format(
        "{} scores triplets only (its contract does not provide {}), and was given pairs", who(m),
        describe_resource(Resource::PairScores, "")));
  }
  if (m.supervision() == Supervision::Conditioned && !c.conditions.defined())
    throw ComponentError(fmt::format(
        "{} needs the condition of every triplet, and this dataset split provides none", who(m)));
  if (c.conditions.defined()) check_long_vector(m, "conditions", c.conditions, b);
  for (const std::string& name : m.contract().needed_names(Resource::TextFeatures))
    if (!items.has_texts(name))
      throw ComponentError(fmt::format("{} needs {}, and its input has none", who(m),
                                       describe_resource(Resource::TextFeatures, name)));
}

}  // namespace

namespace {

// φ, and each further input exactly when the module's contract needs it, of one batch.
void check_embed_input(const ConditionModule& m, const EmbedInput& input) {
  const torch::Tensor& phi = input.phi;
  if (!phi.defined() || phi.dim() != 2)
    throw ComponentError(fmt::format("{}: expected φ [B, D], got {}", who(m), shape_of(phi)));
  const auto expect = [&](Resource resource, const torch::Tensor& t, const char* shape) {
    const bool needed = m.contract().needs_resource(resource);
    if (needed && (!t.defined() || t.dim() != 4 || t.size(0) != phi.size(0)))
      throw ComponentError(fmt::format("{} needs {} {} of the {} images, and was given {}", who(m),
                                       describe_resource(resource, ""), shape, phi.size(0),
                                       shape_of(t)));
    if (!needed && t.defined())
      throw ComponentError(fmt::format("{} was given {}, which its contract does not need", who(m),
                                       describe_resource(resource, "")));
  };
  expect(Resource::FeatureMap, input.feature_map, "[B, C, h, w]");
  expect(Resource::ItemImages, input.images, "[B, channels, H, W]");
}

}  // namespace

torch::Tensor ConditionModule::embed(const EmbedInput& input) {
  check_embed_input(*this, input);
  torch::Tensor psi = guarded(*this, "embed", [&] { return embed_impl(input); });
  expect_floating(*this, "ψ", psi, {input.phi.size(0), num_embeddings(), output_dim()});
  return psi;
}

torch::Tensor ConditionModule::embed(const torch::Tensor& phi) {
  return embed(EmbedInput{phi});
}

torch::Tensor ConditionModule::attention_maps(const EmbedInput& input) {
  if (!contract().provides_resource(Resource::AttentionMaps, ""))
    throw ComponentError(fmt::format("{} was asked for {}, which its contract does not provide",
                                     who(*this), describe_resource(Resource::AttentionMaps, "")));
  check_embed_input(*this, input);
  if (!input.feature_map.defined())
    broke_contract(*this, "it provides attention maps and does not need the feature map");
  torch::Tensor maps = guarded(*this, "attention_maps", [&] { return attention_maps_impl(input); });
  expect_floating(
      *this, "the attention maps", maps,
      {input.phi.size(0), num_embeddings(), input.feature_map.size(2), input.feature_map.size(3)});
  return maps;
}

torch::Tensor ConditionModule::attention_maps_impl(const EmbedInput&) {
  broke_contract(*this, "its contract provides attention maps and it computes none");
}

ComparisonScores ConditionModule::score(const ItemBlocks& items, const Comparisons& comparisons) {
  check_input(*this, items, comparisons);
  ComparisonScores s = guarded(*this, "score", [&] { return score_impl(items, comparisons); });
  const int64_t b = comparisons.size(), k = num_embeddings();
  expect_floating(*this, "second_distances", s.second_distances, {b, k});
  expect_floating(*this, "weights", s.weights, {b, k});
  expect_floating(*this, "fused_second", s.fused_second, {b});
  if (comparisons.are_triplets()) {
    expect_floating(*this, "third_distances", s.third_distances, {b, k});
    expect_floating(*this, "fused_third", s.fused_third, {b});
  } else if (s.third_distances.defined() || s.fused_third.defined()) {
    broke_contract(*this, "it returned distances to a third item for pairs");
  }
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

}  // namespace wscsl
