#include "torchscript_condition_module.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/nn/scoring.hpp"
#include "wscsl/nn/script_module.hpp"

namespace wscsl::torchscript_condition_module {
namespace {

// The module's `supervision` attribute ("weak" when it has none); throws DataError naming the
// file for anything else.
Supervision supervision_of(const torch::jit::Module& script, const std::string& file) {
  if (!script.hasattr("supervision")) return Supervision::Weak;
  const c10::IValue value = script.attr("supervision");
  if (value.isString() && value.toStringRef() == "weak") return Supervision::Weak;
  if (value.isString() && value.toStringRef() == "conditioned") return Supervision::Conditioned;
  throw DataError(
      fmt::format("{}: its supervision attribute must be \"weak\" or \"conditioned\", not {}", file,
                  value.isString() ? "\"" + value.toStringRef() + "\"" : value.type()->repr_str()));
}

std::string shape_of(const torch::Tensor& t) {
  return fmt::format("{} [{}]", c10::toString(t.scalar_type()), fmt::join(t.sizes(), ", "));
}

}  // namespace

Schema<TorchScriptConditionModuleOptions> TorchScriptConditionModule::schema() {
  using O = TorchScriptConditionModuleOptions;
  Schema<O> s(
      "A condition module written in Python: a TorchScript module (torch.jit.save) with "
      "embed(phi [B, D]) -> psi [B, K, E], weights(phi_a, phi_c, phi_f) -> [B, K] (rows summing "
      "to 1; not needed when its supervision attribute is \"conditioned\") and optionally "
      "distances(psi_a, psi_b) -> [B, K] (default: Euclidean); K is its num_embeddings: int "
      "attribute. The fused distance is Σ_k w_k d_k, as for wscsl's own modules.");
  s.field("file", &O::file, "The TorchScript file (.pt), relative to the pipeline's folder.")
      .path()
      .required();
  s.field("input_dim", &O::input_dim, "D, the size of φ (set from the backbone).")
      .min(1)
      .derived(facts::backbone_embedding_dim);
  s.field("trainable", &O::trainable, "Train the module's parameters; false keeps them as saved.");
  return s;
}

Contract TorchScriptConditionModule::contract_of(const Options& options) {
  Contract c;
  if (options.file.empty()) return c;
  // A file that cannot be read or declares nonsense is reported when the module is built.
  try {
    if (supervision_of(nn::load_script_module(options.file, {}), options.file) ==
        Supervision::Conditioned)
      c.needs = {{Resource::TripletConditions}};
  } catch (const Error&) {
  }
  return c;
}

TorchScriptConditionModule::TorchScriptConditionModule(const Options& options)
    : script_(nn::load_script_module(options.file, {"embed"})) {
  supervision_ = supervision_of(script_, options.file);
  if (supervision_ == Supervision::Weak && !script_.find_method("weights"))
    throw DataError(fmt::format(
        "{}: a weakly supervised module (no supervision attribute, or \"weak\") needs a method "
        "weights(phi_a, phi_c, phi_f) -> [B, K]",
        options.file));
  if (!script_.hasattr("num_embeddings") || !script_.attr("num_embeddings").isInt())
    throw DataError(
        fmt::format("{}: the module needs an attribute num_embeddings: int (K)", options.file));
  k_ = script_.attr("num_embeddings").toInt();
  own_distances_ = script_.find_method("distances").has_value();
  probe(options);
  nn::mirror_script_tensors(*this, script_, options.trainable);
}

void TorchScriptConditionModule::probe(const Options& options) {
  const std::string& file = options.file;
  torch::NoGradGuard no_grad;
  script_.eval();
  const std::vector<std::int64_t> phi_shape = {2, options.input_dim};
  const std::string phi_text = fmt::format("phi [{}]", fmt::join(phi_shape, ", "));
  const auto phi = [&] { return torch::randn(phi_shape); };

  const torch::Tensor psi = nn::run_script_method(script_, "embed", {phi()}, file, phi_text);
  if (psi.dim() != 3 || psi.size(0) != 2 || psi.size(1) != k_ || !psi.is_floating_point())
    throw DataError(
        fmt::format("{}: embed must return floating psi [B, K = {}, E]; for {} it "
                    "returned {}",
                    file, k_, phi_text, shape_of(psi)));
  e_ = psi.size(2);
  const auto expect_per_embedding = [&](const torch::Tensor& t, const std::string& method,
                                        const std::string& inputs) {
    if (t.dim() != 2 || t.size(0) != 2 || t.size(1) != k_ || !t.is_floating_point())
      throw DataError(fmt::format("{}: {} must return floating [B, K = {}]; for {} it returned {}",
                                  file, method, k_, inputs, shape_of(t)));
  };
  if (own_distances_) {
    const std::string psi_text = fmt::format("psi_a, psi_b [2, {}, {}]", k_, e_);
    expect_per_embedding(
        nn::run_script_method(script_, "distances", {psi, psi.flip(0)}, file, psi_text),
        "distances", psi_text);
  }
  if (supervision_ == Supervision::Weak) {
    const std::string inputs = "phi_a, phi_c, phi_f " + phi_text.substr(4);
    const torch::Tensor w =
        nn::run_script_method(script_, "weights", {phi(), phi(), phi()}, file, inputs);
    expect_per_embedding(w, "weights", inputs);
    const double off = (w.sum(1) - 1).abs().max().item<double>();
    if (!(off <= 1e-4))
      throw DataError(fmt::format(
          "{}: the rows of weights must sum to 1 (a softmax over K); for {} one sums to {:.6g}",
          file, inputs, 1 + off));
  }
  script_.train();
}

void TorchScriptConditionModule::train(bool on) {
  torch::nn::Module::train(on);
  script_.train(on);
}

torch::Tensor TorchScriptConditionModule::embed_impl(const torch::Tensor& phi) {
  return script_.run_method("embed", phi).toTensor();
}

torch::Tensor TorchScriptConditionModule::distances_impl(const torch::Tensor& psi_a,
                                                         const torch::Tensor& psi_b) {
  if (!own_distances_) return ConditionModule::distances_impl(psi_a, psi_b);
  return script_.run_method("distances", psi_a, psi_b).toTensor();
}

TripletScores TorchScriptConditionModule::score_impl(const TripletInput& in) {
  const torch::Tensor weights =
      supervision_ == Supervision::Conditioned
          ? nn::condition_one_hot(in.conditions, k_)
          : script_.run_method("weights", in.phi_anchor, in.phi_close, in.phi_far).toTensor();
  return nn::expected_distances(distances(in.psi_anchor, in.psi_close),
                                distances(in.psi_anchor, in.psi_far), weights);
}

}  // namespace wscsl::torchscript_condition_module

WSCSL_PLUGIN(torchscript_condition_module, "0.1.0",
             "Condition modules written in Python: a TorchScript module's embed and weights") {
  registrar
      .add<wscsl::ConditionModule, wscsl::torchscript_condition_module::TorchScriptConditionModule>(
          "torchscript");
}
