#include "type_similarity.hpp"

#include "wscsl/nn/distances.hpp"

namespace wscsl::type_similarity {

Schema<TypeSimilarityOptions> TypeSimilarity::schema() {
  using O = TypeSimilarityOptions;
  Schema<O> s(
      "The image part of the type-aware network's similarity loss (Vasileva et al. 2018): on "
      "the general embeddings φ, the mean of two hinges that compare d(close, far), two items of "
      "one type, with d(far, anchor) and d(close, anchor); F.pairwise_distance, batch means.");
  s.field("margin", &O::margin, "μ of both hinges (the released --margin, 0.3).").min(0.0);
  s.field("sign", &O::sign,
          "\"released\" = the released code's hinges max(0, d(f,a) − d(f,c) + μ) and max(0, "
          "d(c,a) − d(c,f) + μ), pushing close and far apart; \"paper\" = the paper's wording, "
          "max(0, d(f,c) − d(f,a) + μ) and max(0, d(f,c) − d(c,a) + μ), pulling them together.",
          EnumChoices<Sign>{
              {Sign::Released, "released",
               "the released code: max(0, d(f,a) − d(f,c) + μ), max(0, d(c,a) − d(c,f) + μ); "
               "pushes close and far apart"},
              {Sign::Paper, "paper",
               "the paper's wording (and the text term's form): max(0, d(f,c) − d(f,a) + μ), "
               "max(0, d(f,c) − d(c,a) + μ); pulls close and far together"}});
  return s;
}

std::map<std::string, torch::Tensor> TypeSimilarity::compute_impl(const LossInput& input) {
  const TripletInput& in = input.triplets;
  // Argument orders as the released code's, since F.pairwise_distance adds its epsilon to a − b.
  const torch::Tensor same_type = nn::pairwise_distance(in.phi_far, in.phi_close);
  const torch::Tensor far_anchor = nn::pairwise_distance(in.phi_far, in.phi_anchor);
  const torch::Tensor close_anchor = nn::pairwise_distance(in.phi_close, in.phi_anchor);
  const double m = options_.margin;
  torch::Tensor first, second;
  switch (options_.sign) {
    case Sign::Released:
      first = torch::relu(far_anchor - same_type + m);
      second = torch::relu(close_anchor - same_type + m);
      break;
    case Sign::Paper:
      first = torch::relu(same_type - far_anchor + m);
      second = torch::relu(same_type - close_anchor + m);
      break;
  }
  return {{"type_similarity", (first.mean() + second.mean()) / 2.0}};
}

}  // namespace wscsl::type_similarity

WSCSL_PLUGIN(type_similarity, "0.1.0",
             "The type-aware network's image similarity term on general embeddings") {
  registrar.add<wscsl::Loss, wscsl::type_similarity::TypeSimilarity>("type_similarity");
}
