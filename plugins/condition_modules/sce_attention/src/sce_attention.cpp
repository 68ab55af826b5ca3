#include "sce_attention.hpp"

#include "wscsl/config/limits.hpp"
#include "wscsl/nn/distances.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::sce_attention {

namespace {

// How many members of a triplet one weight vector reads.
std::int64_t members_read(Branch branch) {
  switch (branch) {
    case Branch::Triplet:
      return 3;
    case Branch::Pair:
      return 2;
  }
  throw Error("sce_attention: unknown branch");
}

const ItemFeatures& pick(Member member, const ComparedItems& in) {
  switch (member) {
    case Member::First:
      return in.first;
    case Member::Second:
      return in.second;
    case Member::Third:
      return in.third;
  }
  throw Error("sce_attention: unknown member");
}

bool reads_text(const SceAttentionOptions& o) {
  return o.assignment == Assignment::Learned && o.branch_input != BranchInput::Visual;
}

// Σ_k w_k ψ_k: w [B, K], ψ [B, K, D] → [B, D].
torch::Tensor fuse(const torch::Tensor& weights, const torch::Tensor& psi) {
  return (weights.unsqueeze(2) * psi).sum(1);
}

bool partitioned(const SceAttentionOptions& o) {
  return o.assignment == Assignment::Partition;
}

// Only the learned triplet branch reads a third item for the weights of d(first, second).
bool scores_pairs(const SceAttentionOptions& o) {
  return o.branch == Branch::Pair || o.assignment != Assignment::Learned;
}

}  // namespace

torch::Tensor released_partition(std::int64_t conditions, std::int64_t embeddings) {
  const std::int64_t width = (conditions + embeddings - 1) / embeddings;
  const torch::Tensor order = torch::randperm(conditions, torch::kLong);
  torch::Tensor partition = torch::empty({conditions}, torch::kLong);
  partition.index_put_({order},
                       torch::div(torch::arange(conditions, torch::kLong), width, "floor"));
  return partition;
}

Schema<SceAttentionOptions> SceAttention::schema() {
  using O = SceAttentionOptions;
  Schema<O> s(
      "SCE-Net (Tan et al., ICCV 2019): masked embeddings ψ_k = φ ⊙ m_k and a condition-weight "
      "branch on the triplet or on each compared pair, fused embedding E = Σ_k w_k ψ_k, "
      "F.pairwise_distance between fused embeddings.");
  condition_options::input_dim(s, &O::input_dim);
  condition_options::num_embeddings(
      s, &O::num_embeddings,
      "K, the number of masks (`num_concepts`; default: the dataset's number of conditions).");
  condition_options::masks(s, &O::masks, "The README's training command uses learned.");
  s.field("hidden", &O::hidden, "Hidden units of the condition-weight branch (released: 32).")
      .min(1)
      .max(kMaxLayerSize)
      .only_when("assignment = \"learned\"",
                 [](const O& o) { return o.assignment == Assignment::Learned; });
  s.field("normalize", &O::normalize,
          "L2-normalise each ψ_k and each φ the branch reads as v/(‖v‖+1e-10) (released code); "
          "false gives the paper's Eq. 1, 2 and 9 without normalisation.");
  s.field("branch", &O::branch,
          "What one weight vector reads: \"triplet\" = [a; f; c], one vector for both distances "
          "(the released UT-Zappos code); \"pair\" = the two items of each distance, w([a; c]) "
          "fusing both images of d(a, c) and w([a; f]) those of d(a, f) (Eq. 3; the author's "
          "outfit variant, which scores any item pair).",
          EnumChoices<Branch>{
              {Branch::Triplet, "triplet",
               "w([a; f; c]) for both distances, in the reference's (anchor, far, close) order"},
              {Branch::Pair, "pair",
               "w([a; c]) for d(a, c), w([a; f]) for d(a, f): the anchor gets two fused "
               "embeddings; `weights` reports w([a; c])"}})
      .only_when("assignment = \"learned\", \"random\" or \"random_per_call\"",
                 [](const O& o) { return o.assignment != Assignment::Average; });
  s.field("branch_input", &O::branch_input,
          "The features of each item the branch reads: \"visual\" = φ̂ (φ normalised as "
          "`normalize` says); \"text\" = T, the features of the text encoder `text` (Eq. 6); "
          "\"visual_text\" = φ̂ ⊙ T (Eq. 7). Items without text have T = 0.",
          EnumChoices<BranchInput>{
              {BranchInput::Visual, "visual", "φ̂, the backbone embedding (Eq. 3)"},
              {BranchInput::Text, "text", "T, the text encoder's features (Eq. 6)"},
              {BranchInput::VisualText, "visual_text", "φ̂ ⊙ T, elementwise (Eq. 7)"}})
      .only_when("assignment = \"learned\"",
                 [](const O& o) { return o.assignment == Assignment::Learned; });
  s.field("text", &O::text,
          "The name of the text encoder ([[text_encoders]] name) whose features the branch reads; "
          "required with branch_input = \"text\" or \"visual_text\".")
      .only_when("assignment = \"learned\" and branch_input = \"text\" or \"visual_text\"",
                 reads_text);
  s.field("assignment", &O::assignment,
          "Where the condition weights come from: \"learned\" = the branch; \"average\" = 1/K each "
          "(the paper's Figure 3 \"average embeddings\"); \"random\" = the released random "
          "baseline (Vasileva et al.'s --rand_typespaces, kept in SCE-Net's main.py): each "
          "type-pair condition is given one of the K embeddings by a random partition drawn once "
          "from the seed; \"random_per_call\" = one embedding drawn uniformly for each weight "
          "vector at every call, in training and evaluation alike (our earlier reading of Figure "
          "3's \"random assignments of image pairs to conditions\"). Average and the random ones "
          "create no branch layers.",
          EnumChoices<Assignment>{
              {Assignment::Learned, "learned", "softmax(Linear(ReLU(Linear(y)))), the branch"},
              {Assignment::Average, "average", "w_k = 1/K"},
              {Assignment::Partition, "random",
               "one-hot on the embedding the partition gives the triplet's type pair: the "
               "conditions in a seeded permutation, in blocks of ⌈conditions / K⌉"},
              {Assignment::PerCall, "random_per_call",
               "one-hot on an embedding drawn uniformly from LibTorch's generator at every call"}});
  condition_options::num_conditions(
      s, &O::num_conditions,
      "The dataset's conditions, which assignment = \"random\" shares among the K embeddings "
      "(set from the dataset).");
  s.check([](const O& o, FieldChecker& c) {
    if (reads_text(o) && !o.text)
      c.error("text",
              "is required with branch_input = \"text\" or \"visual_text\" and names the text "
              "encoder whose features the branch reads");
  });
  return s;
}

Contract SceAttention::contract_of(const Options& options) {
  Contract c;
  c.provides = {{Resource::AuxTerm, "mask_l1"}};
  if (scores_pairs(options)) c.provides.push_back({Resource::PairScores});
  if (reads_text(options)) c.needs.push_back({Resource::TextFeatures, *options.text});
  if (partitioned(options))
    c.needs.insert(c.needs.end(), {{Resource::TripletConditions}, {Resource::TypePairConditions}});
  return c;
}

SceAttention::SceAttention(const Options& options) : options_(options), d_(options.input_dim) {
  const std::int64_t k = options.num_embeddings;
  masks_ = register_module("masks", std::make_shared<nn::ConditionMasks>(k, d_, options.masks));
  if (options.assignment == Assignment::Learned) {
    hidden_ = register_module("branch_hidden",
                              torch::nn::Linear(members_read(options.branch) * d_, options.hidden));
    logits_ = register_module("branch_out", torch::nn::Linear(options.hidden, k));
  }
  // A buffer, so that a checkpoint keeps the partition its run trained with.
  if (partitioned(options))
    partition_ = register_buffer("partition", released_partition(options.num_conditions, k));
}

torch::Tensor SceAttention::maybe_normalize(const torch::Tensor& v) const {
  return options_.normalize ? nn::normalize_offset(v, -1) : v;
}

torch::Tensor SceAttention::embed_impl(const EmbedInput& input) {
  return maybe_normalize(masks_->apply(input.phi));
}

torch::Tensor SceAttention::distances_impl(const torch::Tensor& psi_a, const torch::Tensor& psi_b) {
  return nn::pairwise_distance(psi_a, psi_b);
}

torch::Tensor SceAttention::branch_features(const ComparedItems& in, Member member) const {
  const ItemFeatures& item = pick(member, in);
  const auto visual = [&] { return maybe_normalize(item.phi); };
  const auto text = [&] { return item.texts.at(*options_.text).features; };
  switch (options_.branch_input) {
    case BranchInput::Visual:
      return visual();
    case BranchInput::Text:
      return text();
    case BranchInput::VisualText:
      return visual() * text();
  }
  throw Error("sce_attention: unknown branch_input");
}

torch::Tensor SceAttention::condition_weights(const ComparedItems& in,
                                              const Comparisons& comparisons,
                                              const std::vector<Member>& members) {
  const std::int64_t b = comparisons.size(), k = masks_->count();
  switch (options_.assignment) {
    case Assignment::Learned: {
      std::vector<torch::Tensor> parts;
      for (const Member m : members)
        parts.push_back(branch_features(in, m));
      return torch::softmax(logits_->forward(torch::relu(hidden_->forward(torch::cat(parts, 1)))),
                            1);
    }
    case Assignment::Average:
      return torch::full({b, k}, 1.0 / static_cast<double>(k), in.first.phi.options());
    case Assignment::Partition: {
      if (!comparisons.conditions.defined())
        throw Error("sce_attention: assignment = \"random\" needs each comparison's condition");
      return torch::one_hot(partition_.index_select(0, comparisons.conditions), k)
          .to(in.first.phi.scalar_type());
    }
    case Assignment::PerCall: {
      const torch::Tensor drawn = torch::randint(
          k, {b}, torch::TensorOptions().dtype(torch::kLong).device(in.first.phi.device()));
      return torch::one_hot(drawn, k).to(in.first.phi.scalar_type());
    }
  }
  throw Error("sce_attention: unknown assignment");
}

ComparisonScores SceAttention::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  const ComparedItems in = gather(items, comparisons);
  const bool triplets = comparisons.are_triplets();
  ComparisonScores s;
  s.second_distances = distances(in.first.psi, in.second.psi);
  if (triplets) s.third_distances = distances(in.first.psi, in.third.psi);
  switch (options_.branch) {
    case Branch::Triplet: {
      // One vector for the triplet, read in the reference's (x, y, z) = (anchor, far, close). Pairs
      // come here only with weights that read no item (scores_pairs).
      s.weights =
          condition_weights(in, comparisons, {Member::First, Member::Third, Member::Second});
      const torch::Tensor first = fuse(s.weights, in.first.psi);
      s.fused_second = nn::pairwise_distance(first, fuse(s.weights, in.second.psi));
      if (triplets) s.fused_third = nn::pairwise_distance(first, fuse(s.weights, in.third.psi));
      break;
    }
    case Branch::Pair: {
      // One vector per distance, from the two items it compares.
      s.weights = condition_weights(in, comparisons, {Member::First, Member::Second});
      s.fused_second =
          nn::pairwise_distance(fuse(s.weights, in.first.psi), fuse(s.weights, in.second.psi));
      if (triplets) {
        const torch::Tensor third =
            condition_weights(in, comparisons, {Member::First, Member::Third});
        s.fused_third = nn::pairwise_distance(fuse(third, in.first.psi), fuse(third, in.third.psi));
      }
      break;
    }
  }
  // The reference accumulates every mask's L1 norm over the batch and divides by K.
  s.aux["mask_l1"] = masks_->l1_norms().mean().expand({comparisons.size()});
  return s;
}

}  // namespace wscsl::sce_attention

WSCSL_PLUGIN(sce_attention, "0.3.0",
             "SCE-Net masks with a condition-weight branch (Tan et al., ICCV 2019)") {
  registrar.add<wscsl::ConditionModule, wscsl::sce_attention::SceAttention>("sce_attention");
}
