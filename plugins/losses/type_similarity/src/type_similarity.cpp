#include "type_similarity.hpp"

#include "wscsl/nn/distances.hpp"
#include "wscsl/nn/hinge.hpp"

namespace wscsl::type_similarity {

namespace {

// The three distances of a triplet, with the triplets the term counts.
struct TripletDistances {
  torch::Tensor same_type, far_anchor, close_anchor;  // d(f, c), d(f, a), d(c, a): [B]
  torch::Tensor present;                              // [B] bool
};

}  // namespace

Schema<TypeSimilarityOptions> TypeSimilarity::schema() {
  using O = TypeSimilarityOptions;
  Schema<O> s(
      "The type-aware network's similarity loss (Vasileva et al. 2018): the mean of two hinges "
      "that compare d(close, far), two items of one type, with d(far, anchor) and d(close, "
      "anchor); on the general embeddings φ (image part) or a text encoder's features (text "
      "part); F.pairwise_distance, means over the triplets counted.");
  s.field("margin", &O::margin, "μ of both hinges (the released --margin, 0.3).").min(0.0);
  s.field("input", &O::input,
          "\"image\" = the general embeddings φ of every triplet (the released loss_sim_i); "
          "\"text\" = the features of the text encoder `text`, counting only the triplets whose "
          "three items have text (the released loss_sim_t, always with the paper's sign).",
          EnumChoices<Input>{
              {Input::Image, "image", "φ, every triplet (loss_sim_i, sim_i_loss 5e-5)"},
              {Input::Text, "text",
               "the text encoder's features, triplets with three texts (loss_sim_t, sim_t_loss "
               "5e-5)"}});
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
               "max(0, d(f,c) − d(c,a) + μ); pulls close and far together"}})
      .only_when("input = \"image\"", [](const O& o) { return o.input == Input::Image; });
  s.field("text", &O::text,
          "The name of the text encoder ([[text_encoders]] name) whose features the text part "
          "compares; required with input = \"text\".")
      .only_when("input = \"text\"", [](const O& o) { return o.input == Input::Text; });
  s.check([](const O& o, FieldChecker& c) {
    if (o.input == Input::Text && !o.text)
      c.error("text",
              "is required with input = \"text\" and names the text encoder whose features the "
              "term compares");
  });
  return s;
}

Contract TypeSimilarity::contract_of(const Options& options) {
  Contract c;
  if (options.input == Input::Text) c.needs.push_back({Resource::TextFeatures, *options.text});
  return c;
}

std::map<std::string, torch::Tensor> TypeSimilarity::compute_impl(const LossInput& input) {
  const Comparisons& triplets = input.comparisons;
  // Argument orders as the released code's, since F.pairwise_distance adds its epsilon to a − b:
  // loss_sim_i measures from the far and close images, loss_sim_t from the anchor's text.
  TripletDistances d;
  Sign sign = Sign::Paper;  // the released text term has the paper's sign
  switch (options_.input) {
    case Input::Image: {
      const ComparedItems in = gather(input.items, triplets);
      const torch::Tensor &anchor = in.first.phi, &close = in.second.phi, &far = in.third.phi;
      d = {nn::pairwise_distance(far, close), nn::pairwise_distance(far, anchor),
           nn::pairwise_distance(close, anchor),
           torch::ones({triplets.size()},
                       torch::TensorOptions().dtype(torch::kBool).device(anchor.device()))};
      sign = options_.sign;
      break;
    }
    case Input::Text: {
      const ComparedItems in = gather(input.items, triplets);
      const TextFeatures &anchor = in.first.texts.at(*options_.text),
                         &close = in.second.texts.at(*options_.text),
                         &far = in.third.texts.at(*options_.text);
      d = {nn::pairwise_distance(far.features, close.features),
           nn::pairwise_distance(anchor.features, far.features),
           nn::pairwise_distance(anchor.features, close.features),
           anchor.present & close.present & far.present};
      break;
    }
  }
  const double m = options_.margin;
  torch::Tensor first, second;
  switch (sign) {
    case Sign::Released:
      first = nn::masked_hinge_mean(d.far_anchor, d.same_type, m, d.present);
      second = nn::masked_hinge_mean(d.close_anchor, d.same_type, m, d.present);
      break;
    case Sign::Paper:
      first = nn::masked_hinge_mean(d.same_type, d.far_anchor, m, d.present);
      second = nn::masked_hinge_mean(d.same_type, d.close_anchor, m, d.present);
      break;
  }
  return {{"type_similarity", (first + second) / 2.0}};
}

}  // namespace wscsl::type_similarity

WSCSL_PLUGIN(type_similarity, "0.2.0",
             "The type-aware network's similarity terms on general embeddings or text features") {
  registrar.add<wscsl::Loss, wscsl::type_similarity::TypeSimilarity>("type_similarity");
}
