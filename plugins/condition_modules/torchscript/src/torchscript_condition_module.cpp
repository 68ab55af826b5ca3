#include "torchscript_condition_module.hpp"

#include <algorithm>
#include <utility>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wscsl/nn/scoring.hpp"
#include "wscsl/nn/script_module.hpp"
#include "wscsl/plugin/condition_options.hpp"
#include "wscsl/util/tensor_text.hpp"

namespace wscsl::torchscript_condition_module {
namespace {

constexpr const char* kWeightsSignature =
    "weights(phi [N, D], first [B], second [B], third: Optional[Tensor]) -> [B, K]";
constexpr const char* kAuxSignature =
    "aux(phi [N, D], first [B], second [B], third: Optional[Tensor]) -> Dict[str, Tensor]";

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

// The module's `scores_pairs` attribute; without one, a conditioned module scores pairs (its
// weights are the one-hot of the pair's condition) and a weak one does not. Throws DataError naming
// the file when it is not a bool.
bool scores_pairs_of(const torch::jit::Module& script, Supervision supervision,
                     const std::string& file) {
  if (!script.hasattr("scores_pairs")) return supervision == Supervision::Conditioned;
  const c10::IValue value = script.attr("scores_pairs");
  if (!value.isBool())
    throw DataError(fmt::format("{}: its scores_pairs attribute must be a bool, not {}", file,
                                value.type()->repr_str()));
  return value.toBool();
}

// The names in the module's `aux_terms: List[str]` attribute (none when it has none); throws
// DataError naming the file when the attribute is not a list of strings or aux is missing.
std::vector<std::string> aux_terms_of(const torch::jit::Module& script, const std::string& file) {
  std::vector<std::string> names;
  if (!script.hasattr("aux_terms")) {
    if (script.find_method("aux"))
      throw DataError(fmt::format(
          "{}: it has an aux method but no aux_terms: List[str] attribute naming what it returns",
          file));
    return names;
  }
  const c10::IValue value = script.attr("aux_terms");
  if (!value.isList()) throw DataError(fmt::format("{}: aux_terms must be a List[str]", file));
  for (const c10::IValue& name : value.toListRef()) {
    if (!name.isString()) throw DataError(fmt::format("{}: aux_terms must be a List[str]", file));
    names.push_back(name.toStringRef());
  }
  if (!names.empty() && !script.find_method("aux"))
    throw DataError(
        fmt::format("{}: it declares aux_terms but has no method {}", file, kAuxSignature));
  return names;
}

// Throws DataError naming the file unless `method` takes the four arguments of `signature` (a
// module written for three φ, weights(phi_a, phi_c, phi_f), is told what it must take instead).
void check_takes_comparisons(const torch::jit::Module& script, const std::string& method,
                             const char* signature, const std::string& file) {
  const std::vector<c10::Argument>& arguments =
      script.get_method(method).function().getSchema().arguments();
  if (arguments.size() == 5) return;  // self, phi, first, second, third
  std::vector<std::string> parameters;
  for (std::size_t i = 1; i < arguments.size(); ++i)
    parameters.push_back(arguments[i].name() + ": " + arguments[i].type()->annotation_str());
  throw DataError(fmt::format(
      "{}: {} must be {} (the items' phi and the item rows of each comparison; third is None for "
      "pairs), not {}({})",
      file, method, signature, method, fmt::join(parameters, ", ")));
}

// A method's arguments for `comparisons` of items with features `phi`: None for a pair's third.
std::vector<c10::IValue> comparison_arguments(const torch::Tensor& phi,
                                              const Comparisons& comparisons) {
  return {phi, comparisons.first, comparisons.second,
          comparisons.are_triplets() ? c10::IValue(comparisons.third) : c10::IValue()};
}

// A method's [B, K] answer for `inputs`, or a DataError naming `file` and what it returned.
void expect_per_embedding(const std::string& file, std::int64_t k, std::int64_t batch,
                          const torch::Tensor& t, const std::string& method,
                          const std::string& inputs) {
  if (t.dim() != 2 || t.size(0) != batch || t.size(1) != k || !t.is_floating_point())
    throw DataError(fmt::format("{}: {} must return floating [B, K = {}]; for {} it returned {}",
                                file, method, k, inputs, dtype_and_shape_of(t)));
}

}  // namespace

Schema<TorchScriptConditionModuleOptions> TorchScriptConditionModule::schema() {
  using O = TorchScriptConditionModuleOptions;
  Schema<O> s(
      "A condition module written in Python: a TorchScript module (torch.jit.save) with "
      "embed(phi [B, D]) -> psi [B, K, E], weights(phi [N, D], first [B], second [B], third: "
      "Optional[Tensor]) -> [B, K] for comparisons of the items' rows (rows summing to 1; third "
      "is None for pairs; not needed when its supervision attribute is \"conditioned\") and "
      "optionally distances(psi_a, psi_b) -> [B, K] (default: Euclidean) and aux(phi, first, "
      "second, third) -> Dict[str, Tensor] (per-comparison terms for losses, named by its "
      "aux_terms: List[str]); K is its num_embeddings: int attribute. It scores pairs when its "
      "scores_pairs: bool attribute says so (default: when conditioned). The fused distance is "
      "Σ_k w_k d_k, as for wscsl's own modules.");
  s.field("file", &O::file, "The TorchScript file (.pt), relative to the pipeline's folder.")
      .path()
      .required();
  condition_options::input_dim(s, &O::input_dim);
  s.field("trainable", &O::trainable, "Train the module's parameters; false keeps them as saved.");
  condition_options::num_conditions(
      s, &O::num_conditions,
      "The dataset's conditions, each of which a conditioned module scores by its own embedding "
      "(set from the dataset).");
  return s;
}

Contract TorchScriptConditionModule::contract_of(const Options& options) {
  Contract c;
  if (options.file.empty()) return c;
  // A file that cannot be read or declares nonsense is reported when the module is built.
  try {
    const torch::jit::Module script = nn::load_script_module(options.file, {});
    const Supervision supervision = supervision_of(script, options.file);
    if (supervision == Supervision::Conditioned) c.needs = {{Resource::TripletConditions}};
    for (const std::string& name : aux_terms_of(script, options.file))
      c.provides.push_back({Resource::AuxTerm, name});
    if (scores_pairs_of(script, supervision, options.file))
      c.provides.push_back({Resource::PairScores});
  } catch (const Error&) {
  }
  return c;
}

TorchScriptConditionModule::TorchScriptConditionModule(const Options& options)
    : script_(nn::load_script_module(options.file, {"embed"})) {
  supervision_ = supervision_of(script_, options.file);
  if (supervision_ == Supervision::Weak) {
    if (!script_.find_method("weights"))
      throw DataError(fmt::format(
          "{}: a weakly supervised module (no supervision attribute, or \"weak\") needs a method "
          "{}",
          options.file, kWeightsSignature));
    check_takes_comparisons(script_, "weights", kWeightsSignature, options.file);
  }
  if (!script_.hasattr("num_embeddings") || !script_.attr("num_embeddings").isInt())
    throw DataError(
        fmt::format("{}: the module needs an attribute num_embeddings: int (K)", options.file));
  k_ = script_.attr("num_embeddings").toInt();
  if (supervision_ == Supervision::Conditioned && k_ < options.num_conditions)
    throw DataError(fmt::format(
        "{}: a conditioned module scores each triplet by the embedding its condition names, and "
        "num_embeddings = {} leaves conditions of the dataset's {} without one",
        options.file, k_, options.num_conditions));
  own_distances_ = script_.find_method("distances").has_value();
  aux_terms_ = aux_terms_of(script_, options.file);
  if (!aux_terms_.empty()) check_takes_comparisons(script_, "aux", kAuxSignature, options.file);
  scores_pairs_ = scores_pairs_of(script_, supervision_, options.file);
  probe(options);
  nn::mirror_script_tensors(*this, script_, options.trainable);
}

void TorchScriptConditionModule::probe(const Options& options) {
  const std::string& file = options.file;
  torch::NoGradGuard no_grad;
  script_.eval();
  // More items than comparisons, so that weights returning a row per item are caught.
  const std::vector<std::int64_t> phi_shape = {4, options.input_dim};
  const std::string phi_text = fmt::format("phi [{}]", fmt::join(phi_shape, ", "));
  // Its own generator: building the module leaves the run's random stream as it was.
  torch::Generator rng = at::detail::createCPUGenerator(0);
  const torch::Tensor phi = torch::randn(phi_shape, rng);
  const Comparisons triplets =
      Comparisons::triplets(torch::tensor({0, 2, 3, 1, 3, 2}, torch::kLong).view({2, 3}));
  const std::int64_t batch = triplets.size();

  const torch::Tensor psi = nn::run_script_method(script_, "embed", {phi}, file, phi_text);
  if (psi.dim() != 3 || psi.size(0) != phi_shape[0] || psi.size(1) != k_ ||
      !psi.is_floating_point())
    throw DataError(
        fmt::format("{}: embed must return floating psi [B, K = {}, E]; for {} it "
                    "returned {}",
                    file, k_, phi_text, dtype_and_shape_of(psi)));
  e_ = psi.size(2);
  if (own_distances_) {
    const std::string psi_text = fmt::format("psi_a, psi_b [{}, {}, {}]", batch, k_, e_);
    expect_per_embedding(file, k_, batch,
                         nn::run_script_method(script_, "distances",
                                               {psi.index_select(0, triplets.first),
                                                psi.index_select(0, triplets.second)},
                                               file, psi_text),
                         "distances", psi_text);
  }
  probe_scores(phi, triplets,
               fmt::format("{} and the triplets first, second, third [{}]", phi_text, batch), file);
  if (scores_pairs_)
    probe_scores(phi, Comparisons::pairs(triplets.first, triplets.second),
                 fmt::format("{} and the pairs first, second [{}], third None", phi_text, batch),
                 file);
  script_.train();
}

void TorchScriptConditionModule::probe_scores(const torch::Tensor& phi,
                                              const Comparisons& comparisons,
                                              const std::string& inputs, const std::string& file) {
  const std::int64_t batch = comparisons.size();
  const std::vector<c10::IValue> arguments = comparison_arguments(phi, comparisons);
  if (supervision_ == Supervision::Weak) {
    const torch::Tensor w = nn::run_script_method(script_, "weights", arguments, file, inputs);
    expect_per_embedding(file, k_, batch, w, "weights", inputs);
    const double off = (w.sum(1) - 1).abs().max().item<double>();
    if (!(off <= 1e-4))
      throw DataError(fmt::format(
          "{}: the rows of weights must sum to 1 (a softmax over K); for {} one sums to {:.6g}",
          file, inputs, 1 + off));
  }
  if (!aux_terms_.empty()) check_aux(run_aux(arguments), batch, file);
}

void TorchScriptConditionModule::check_aux(const std::map<std::string, torch::Tensor>& terms,
                                           std::int64_t batch, const std::string& file) const {
  std::vector<std::string> returned;
  for (const auto& [name, tensor] : terms) {
    returned.push_back(name);
    if (tensor.dim() != 1 || tensor.size(0) != batch || !tensor.is_floating_point())
      throw DataError(
          fmt::format("{}: aux term '{}' must be a floating per-comparison [B] tensor; "
                      "for B = {} it is {}",
                      file, name, batch, dtype_and_shape_of(tensor)));
  }
  std::vector<std::string> declared = aux_terms_;
  std::sort(declared.begin(), declared.end());
  if (returned != declared)
    throw DataError(
        fmt::format("{}: aux must return a Dict[str, Tensor] with exactly its "
                    "aux_terms ({}); it returned [{}]",
                    file, fmt::join(declared, ", "), fmt::join(returned, ", ")));
}

std::map<std::string, torch::Tensor> TorchScriptConditionModule::run_aux(
    const std::vector<c10::IValue>& inputs) {
  const c10::IValue out = script_.get_method("aux")(inputs);
  std::map<std::string, torch::Tensor> terms;
  if (out.isGenericDict())
    for (const auto& entry : out.toGenericDict())
      if (entry.key().isString() && entry.value().isTensor())
        terms.emplace(entry.key().toStringRef(), entry.value().toTensor());
  return terms;
}

void TorchScriptConditionModule::train(bool on) {
  torch::nn::Module::train(on);
  script_.train(on);
}

torch::Tensor TorchScriptConditionModule::embed_impl(const EmbedInput& input) {
  return script_.run_method("embed", input.phi).toTensor();
}

torch::Tensor TorchScriptConditionModule::distances_impl(const torch::Tensor& psi_a,
                                                         const torch::Tensor& psi_b) {
  if (!own_distances_) return ConditionModule::distances_impl(psi_a, psi_b);
  return script_.run_method("distances", psi_a, psi_b).toTensor();
}

ComparisonScores TorchScriptConditionModule::score_impl(const ItemBlocks& items,
                                                        const Comparisons& comparisons) {
  const std::vector<c10::IValue> arguments = comparison_arguments(items.by_row().phi, comparisons);
  ComparisonScores scores =
      supervision_ == Supervision::Conditioned
          ? nn::conditioned_distances(*this, items, comparisons)
          : nn::expected_distances(*this, gather(items, comparisons),
                                   script_.get_method("weights")(arguments).toTensor());
  if (!aux_terms_.empty()) scores.aux = run_aux(arguments);
  return scores;
}

}  // namespace wscsl::torchscript_condition_module

WSCSL_PLUGIN(torchscript_condition_module, "0.1.0",
             "Condition modules written in Python: a TorchScript module's embed and weights") {
  registrar
      .add<wscsl::ConditionModule, wscsl::torchscript_condition_module::TorchScriptConditionModule>(
          "torchscript");
}
