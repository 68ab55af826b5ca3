#include "discovernet.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sequential_branch.hpp"
#include "set_branch.hpp"
#include "transformer_branch.hpp"
#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/scoring.hpp"
#include "wscsl/plugin/condition_options.hpp"

namespace wscsl::discovernet {

Schema<DiscoverNetOptions> DiscoverNet::schema() {
  using O = DiscoverNetOptions;
  Schema<O> s(
      "DiscoverNet: K projections ψ_k = normalize(W_k φ) (or (I+L_k)φ), a set function g over the "
      "triplet's pairs matched to K anchors by a temperature softmax p(τ), and the expected "
      "distances Σ_k p_k d_k(a,·).");
  condition_options::input_dim(s, &O::input_dim);
  condition_options::num_embeddings(
      s, &O::num_embeddings,
      "K, the number of embeddings ψ_k (default: the dataset's number of conditions).");
  condition_options::embedding_dim(s, &O::embedding_dim, "E, the size of each ψ_k (default: D).");
  s.field("projection", &O::projection,
          "\"linear\": ψ_k = normalize(W_k φ) (released code); \"residual\": ψ_k = "
          "normalize(φ + L_k φ) (the paper's Eq. 8).",
          EnumChoices<Projection>{
              {Projection::Linear, "linear", "ψ_k = normalize(W_k φ), the released code"},
              {Projection::Residual, "residual", "ψ_k = normalize(φ + L_k φ), the paper's Eq. 8"}});
  s.field("g", &O::g,
          "The triplet summary g: \"set\" (Eq. 9, max over pair tokens), \"sequential\" (a "
          "bidirectional LSTM over (anchor, far, close), zero initial states), \"transformer\" "
          "(single-head self-attention over pair tokens, dropout 0.1 / 0.5 as released).",
          EnumChoices<Summary>{
              {Summary::Set, "set", "DiscoverNet-Set: max over pair tokens (Eq. 9)"},
              {Summary::Sequential, "sequential", "DiscoverNet-Seq: a bidirectional LSTM"},
              {Summary::Transformer, "transformer", "DiscoverNet-Tra: self-attention over pairs"}});
  s.field("pairs", &O::pairs,
          "Pair tokens of the set and transformer g: 2 = {[a,f],[a,c]}, invariant to swapping "
          "close and far (DiscoverNet-Set); 3 adds [f,c] (released default, used with the "
          "semantic regularizer). The sequential g reads the ordered triplet instead.")
      .choices({2, 3})
      .only_when("g = \"set\" or \"transformer\"",
                 [](const O& o) { return o.g != Summary::Sequential; });
  s.field("temperature", &O::temperature, "Softmax temperature τ of p(τ).").greater_than(0.0);
  s.field("logits", &O::logits,
          "\"anchor_normalized\": g · normalize(a_k) (released code); \"cosine\": cos(g, a_k) "
          "(the paper's Eq. 7).",
          EnumChoices<Logits>{{Logits::AnchorNormalized, "anchor_normalized",
                               "g · normalize(a_k), the released code"},
                              {Logits::Cosine, "cosine", "cos(g, a_k), the paper's Eq. 7"}});
  s.field("normalize_g_input", &O::normalize_g_input, "L2-normalise φ before g.");
  s.field("train_condition_branch", &O::train_condition_branch,
          "Train g and the anchors (the paper). The released code keeps them at their random "
          "initialisation (false).");
  s.check([](const O& o, FieldChecker& c) {
    const std::int64_t d = o.input_dim;
    if (o.projection == Projection::Residual && o.embedding_dim != d)
      c.error("embedding_dim",
              fmt::format("must equal input_dim ({}) for residual projections", d));
    if (o.g == Summary::Sequential && d % 2 != 0)
      c.error("g", fmt::format("the sequential g needs an even input_dim (its bidirectional LSTM "
                               "has D/2 units per direction and a residual), got {}",
                               d));
  });
  return s;
}

std::shared_ptr<TripletSummary> DiscoverNet::make_summary(const Options& options, std::int64_t d) {
  switch (options.g) {
    case Summary::Sequential:
      return std::make_shared<SequentialBranch>(d);
    case Summary::Transformer:
      return std::make_shared<TransformerBranch>(d, options.pairs);
    case Summary::Set:
      return std::make_shared<SetBranch>(d, options.pairs);
  }
  throw Error("discovernet: unknown g");
}

DiscoverNet::DiscoverNet(const Options& options)
    : options_(options),
      d_(options.input_dim),
      k_(options.num_embeddings),
      e_(options.embedding_dim) {
  projection_ = register_module(
      "projection", torch::nn::Linear(torch::nn::LinearOptions(d_, k_ * e_).bias(false)));
  g_ = register_module("g", make_summary(options, d_));
  // Initialised like nn.Linear(D, K, bias=False).weight: U(±1/√D).
  const double bound = 1.0 / std::sqrt(static_cast<double>(d_));
  anchors_ = register_parameter("anchors", torch::empty({k_, d_}).uniform_(-bound, bound));
  if (!options.train_condition_branch) {
    for (auto& p : g_->parameters())
      p.set_requires_grad(false);
    anchors_.set_requires_grad(false);
  }
}

torch::Tensor DiscoverNet::embed_impl(const EmbedInput& input) {
  const torch::Tensor& phi = input.phi;
  torch::Tensor psi = projection_->forward(phi).view({phi.size(0), k_, e_});
  switch (options_.projection) {
    case Projection::Residual:
      psi = psi + phi.unsqueeze(1);
      break;
    case Projection::Linear:
      break;
  }
  return nn::normalize_clamped(psi, -1);
}

torch::Tensor DiscoverNet::condition_weights(const torch::Tensor& phi_anchor,
                                             const torch::Tensor& phi_close,
                                             const torch::Tensor& phi_far) {
  auto prepare = [&](const torch::Tensor& x) {
    return options_.normalize_g_input ? nn::normalize_clamped(x, 1) : x;
  };
  torch::Tensor summary = g_->forward(prepare(phi_anchor), prepare(phi_close), prepare(phi_far));
  switch (options_.logits) {
    case Logits::Cosine:
      summary = nn::normalize_clamped(summary, 1);
      break;
    case Logits::AnchorNormalized:
      break;
  }
  const torch::Tensor logits = summary.matmul(nn::normalize_clamped(anchors_, 1).t());
  return torch::softmax(logits / options_.temperature, 1);
}

ComparisonScores DiscoverNet::score_impl(const ItemBlocks& items, const Comparisons& comparisons) {
  const ComparedItems in = gather(items, comparisons);
  return nn::expected_distances(*this, in,
                                condition_weights(in.first.phi, in.second.phi, in.third.phi));
}

}  // namespace wscsl::discovernet

WSCSL_PLUGIN(discovernet, "0.1.0", "DiscoverNet condition module (Ye, Shi, Zhan, CVPR 2022)") {
  registrar.add<wscsl::ConditionModule, wscsl::discovernet::DiscoverNet>("discovernet");
}
