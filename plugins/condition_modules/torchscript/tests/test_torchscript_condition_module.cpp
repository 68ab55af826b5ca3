#include <gtest/gtest.h>

#include <fmt/format.h>

#include "../src/torchscript_condition_module.hpp"
#include "wscsl/testing/fixtures.hpp"
#include "wscsl/testing/harness.hpp"
#include "wscsl/testing/image_fixtures.hpp"

using namespace wscsl;
namespace fs = std::filesystem;
using wscsl::torchscript_condition_module::TorchScriptConditionModule;

namespace {

constexpr std::int64_t kD = 6, kK = 3, kE = 4;

// A scripted module as torch.jit.script would make one in Python: ψ = reshape(φ Pᵀ) and
// weights softmax(φ_first Gᵀ).
const char* const kEmbed = R"(
def embed(self, phi):
    return phi.mm(self.proj.t()).view(phi.size(0), 3, 4)
)";
const char* const kWeights = R"(
def weights(self, phi, first, second, third: Optional[Tensor]):
    return torch.softmax(phi.index_select(0, first).mm(self.gate.t()), dim=1)
)";
// Weights that read the whole comparison: |φ_first − φ_second|, and |φ_first − φ_third| when there
// is a third item.
const char* const kComparisonWeights = R"(
def weights(self, phi, first, second, third: Optional[Tensor]):
    anchor = phi.index_select(0, first)
    evidence = (anchor - phi.index_select(0, second)).abs()
    if third is not None:
        evidence = evidence + (anchor - phi.index_select(0, third)).abs()
    return torch.softmax(evidence.mm(self.gate.t()), dim=1)
)";

torch::jit::Module script(const std::vector<std::string>& methods,
                          const std::string& supervision = "", bool with_k = true) {
  torch::jit::Module m("method");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("proj", torch::randn({kK * kE, kD}).requires_grad_(), false);
  m.register_parameter("gate", torch::randn({kK, kD}).requires_grad_(), false);
  if (with_k) m.register_attribute("num_embeddings", c10::IntType::get(), kK);
  if (!supervision.empty())
    m.register_attribute("supervision", c10::StringType::get(), supervision);
  for (const std::string& source : methods)
    m.define(source);
  return m;
}

fs::path save(const torch::jit::Module& m, const wscsl::testing::ScratchDir& dir,
              const std::string& name) {
  const fs::path file = dir.path() / name;
  m.save(file.string());
  return file;
}

std::shared_ptr<ConditionModule> module_from(const fs::path& file) {
  return wscsl::testing::build<ConditionModule>("torchscript", "file = \"" + file.string() + "\"",
                                                wscsl::testing::facts(kK, kD));
}

std::string build_error(const fs::path& file) {
  try {
    module_from(file);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

torch::Tensor param(ConditionModule& m, const std::string& name) {
  return wscsl::testing::parameter(dynamic_cast<torch::nn::Module&>(m), name);
}

torch::Tensor rows(const torch::Tensor& t, const torch::Tensor& index) {
  return t.index_select(0, index);
}

}  // namespace

TEST(TorchScriptConditionModule, FusesTheScriptsDistancesUnderItsWeights) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  auto m = module_from(save(script({kEmbed, kWeights}), dir, "weak.pt"));
  EXPECT_EQ(m->num_embeddings(), kK);
  EXPECT_EQ(m->output_dim(), kE);
  EXPECT_EQ(m->supervision(), Supervision::Weak);

  EXPECT_FALSE(m->contract().provides_resource(Resource::PairScores, ""));

  const auto t = wscsl::testing::random_triplets(*m, 5, kD);
  const Comparisons& c = t.comparisons;
  const torch::Tensor proj = param(*m, "proj"), gate = param(*m, "gate");
  const auto psi = [&](const torch::Tensor& phi) {
    return phi.mm(proj.t()).view({phi.size(0), kK, kE});
  };
  EXPECT_TRUE(torch::allclose(t.items.psi, psi(t.items.phi)));
  const ComparisonScores s = m->score(t.items, c);
  const torch::Tensor anchor = rows(t.items.phi, c.first);
  const torch::Tensor w = torch::softmax(anchor.mm(gate.t()), 1);
  const torch::Tensor close = (psi(anchor) - psi(rows(t.items.phi, c.second))).norm(2, 2);
  const torch::Tensor far = (psi(anchor) - psi(rows(t.items.phi, c.third))).norm(2, 2);
  EXPECT_TRUE(torch::allclose(s.weights, w));
  EXPECT_TRUE(torch::allclose(s.fused_second, (w * close).sum(1), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(s.fused_third, (w * far).sum(1), 1e-5, 1e-6));

  (s.fused_second - s.fused_third).sum().backward();
  EXPECT_TRUE(proj.grad().defined() && proj.grad().abs().sum().item<double>() > 0);
  EXPECT_TRUE(gate.grad().defined() && gate.grad().abs().sum().item<double>() > 0);
}

TEST(TorchScriptConditionModule, UsesItsOwnDistancesWhenItHasThem) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  auto m = module_from(save(script({kEmbed, kWeights, R"(
def distances(self, psi_a, psi_b):
    return (psi_a - psi_b).abs().sum(2)
)"}),
                            dir, "l1.pt"));
  const auto t = wscsl::testing::random_triplets(*m, 4, kD);
  const torch::Tensor anchor = rows(t.items.psi, t.comparisons.first);
  const torch::Tensor far = rows(t.items.psi, t.comparisons.third);
  EXPECT_TRUE(torch::allclose(m->distances(anchor, far), (anchor - far).abs().sum(2)));
}

TEST(TorchScriptConditionModule, AConditionedModuleSelectsTheConditionOfTripletsAndPairs) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  const fs::path file = save(script({kEmbed}, "conditioned"), dir, "conditioned.pt");
  auto m = module_from(file);
  EXPECT_EQ(m->supervision(), Supervision::Conditioned);
  TorchScriptConditionModule::Options options;
  options.file = file.string();
  const Contract contract = TorchScriptConditionModule::contract_of(options);
  ASSERT_EQ(contract.needs.size(), 1u);
  EXPECT_EQ(contract.needs[0].resource, Resource::TripletConditions);
  EXPECT_TRUE(contract.provides_resource(Resource::PairScores, ""));

  const auto t = wscsl::testing::random_triplets(*m, 6, kD, /*with_conditions=*/true);
  const Comparisons& c = t.comparisons;
  const ComparisonScores s = m->score(t.items, c);
  for (std::int64_t i = 0; i < 6; ++i) {
    const std::int64_t condition = c.conditions[i].item<std::int64_t>();
    EXPECT_FLOAT_EQ(s.fused_second[i].item<float>(),
                    s.second_distances[i][condition].item<float>());
  }
  const ComparisonScores pairs = m->score(t.items, {c.first, c.second, {}, c.conditions, {}, {}});
  EXPECT_TRUE(torch::equal(pairs.fused_second, s.fused_second));
  EXPECT_TRUE(torch::equal(pairs.weights, s.weights));
  EXPECT_FALSE(pairs.fused_third.defined());
}

TEST(TorchScriptConditionModule, AWeakModuleThatScoresPairsIsGivenNoneForTheirThirdItem) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  torch::jit::Module pairwise = script({kEmbed, kComparisonWeights});
  pairwise.register_attribute("scores_pairs", c10::BoolType::get(), true);
  auto m = module_from(save(pairwise, dir, "pairs.pt"));
  EXPECT_TRUE(m->contract().provides_resource(Resource::PairScores, ""));

  const auto t = wscsl::testing::random_triplets(*m, 5, kD);
  const Comparisons& c = t.comparisons;
  const torch::Tensor gate = param(*m, "gate");
  const torch::Tensor anchor = rows(t.items.phi, c.first);
  const torch::Tensor close = (anchor - rows(t.items.phi, c.second)).abs();
  const torch::Tensor far = (anchor - rows(t.items.phi, c.third)).abs();
  const ComparisonScores triplets = m->score(t.items, c);
  EXPECT_TRUE(torch::allclose(triplets.weights, torch::softmax((close + far).mm(gate.t()), 1)));
  const ComparisonScores pairs = m->score(t.items, Comparisons::pairs(c.first, c.second));
  const torch::Tensor w = torch::softmax(close.mm(gate.t()), 1);
  EXPECT_TRUE(torch::allclose(pairs.weights, w));
  EXPECT_TRUE(torch::allclose(pairs.fused_second, (w * triplets.second_distances).sum(1)));
  EXPECT_FALSE(pairs.third_distances.defined());
  EXPECT_FALSE(pairs.fused_third.defined());

  // Declaring pairs obliges weights to take None: the probe tries it when the module is built.
  torch::jit::Module triplets_only = script({kEmbed, R"(
def weights(self, phi, first, second, third: Tensor):
    return torch.softmax((phi.index_select(0, first) - phi.index_select(0, third)).mm(self.gate.t()), dim=1)
)"});
  triplets_only.register_attribute("scores_pairs", c10::BoolType::get(), true);
  const std::string refused = build_error(save(triplets_only, dir, "triplets_only.pt"));
  EXPECT_NE(refused.find("triplets_only.pt: weights failed on phi [4, 6] and the pairs first, "
                         "second [2], third None"),
            std::string::npos)
      << refused;
  torch::jit::Module int_pairs = script({kEmbed, kComparisonWeights});
  int_pairs.register_attribute("scores_pairs", c10::IntType::get(), 1);
  EXPECT_NE(build_error(save(int_pairs, dir, "int_pairs.pt"))
                .find("its scores_pairs attribute must be a bool, not int"),
            std::string::npos);
}

// A script written for the three-φ signature of earlier versions is told the one it needs.
TEST(TorchScriptConditionModule, AScriptWithTheThreePhiSignatureIsRefusedWithTheExpectedOne) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  const std::string weights = build_error(save(script({kEmbed, R"(
def weights(self, phi_a, phi_c, phi_f):
    return torch.softmax(phi_a.mm(self.gate.t()), dim=1)
)"}),
                                               dir, "three_phi.pt"));
  EXPECT_NE(weights.find("three_phi.pt: weights must be weights(phi [N, D], first [B], second "
                         "[B], third: Optional[Tensor]) -> [B, K]"),
            std::string::npos)
      << weights;
  EXPECT_NE(weights.find("not weights(phi_a: Tensor, phi_c: Tensor, phi_f: Tensor)"),
            std::string::npos)
      << weights;

  torch::jit::Module old_aux = script({kEmbed, kWeights, R"(
def aux(self, phi_a, phi_c, phi_f):
    return {"gate_norm": phi_a.mm(self.gate.t()).abs().sum(1)}
)"});
  old_aux.register_attribute("aux_terms", c10::ListType::ofStrings(),
                             c10::List<std::string>({"gate_norm"}));
  const std::string aux = build_error(save(old_aux, dir, "three_phi_aux.pt"));
  EXPECT_NE(aux.find("three_phi_aux.pt: aux must be aux(phi [N, D], first [B], second [B], "
                     "third: Optional[Tensor]) -> Dict[str, Tensor]"),
            std::string::npos)
      << aux;
}

TEST(TorchScriptConditionModule, ItsAuxTermsReachTheScoresAndItsContract) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  torch::jit::Module m = script({kEmbed, kWeights, R"(
def aux(self, phi, first, second, third: Optional[Tensor]):
    return {"gate_norm": phi.index_select(0, first).mm(self.gate.t()).abs().sum(1)}
)"});
  m.register_attribute("aux_terms", c10::ListType::ofStrings(),
                       c10::List<std::string>({"gate_norm"}));
  const fs::path file = save(m, dir, "aux.pt");
  auto module = module_from(file);
  TorchScriptConditionModule::Options options;
  options.file = file.string();
  const Contract contract = TorchScriptConditionModule::contract_of(options);
  ASSERT_EQ(contract.provides.size(), 1u);
  EXPECT_EQ(contract.provides[0].resource, Resource::AuxTerm);
  EXPECT_EQ(contract.provides[0].name, "gate_norm");
  const auto t = wscsl::testing::random_triplets(*module, 4, kD);
  const ComparisonScores s = module->score(t.items, t.comparisons);
  ASSERT_EQ(s.aux.count("gate_norm"), 1u);
  EXPECT_TRUE(torch::allclose(
      s.aux.at("gate_norm"),
      rows(t.items.phi, t.comparisons.first).mm(param(*module, "gate").t()).abs().sum(1)));

  torch::jit::Module wrong = script({kEmbed, kWeights, R"(
def aux(self, phi, first, second, third: Optional[Tensor]):
    return {"other": phi.index_select(0, first).sum(1)}
)"});
  wrong.register_attribute("aux_terms", c10::ListType::ofStrings(),
                           c10::List<std::string>({"gate_norm"}));
  const std::string message = build_error(save(wrong, dir, "wrong_aux.pt"));
  EXPECT_NE(message.find("exactly its aux_terms (gate_norm); it returned [other]"),
            std::string::npos)
      << message;
  const std::string undeclared = build_error(save(script({kEmbed, kWeights, R"(
def aux(self, phi, first, second, third: Optional[Tensor]):
    return {"other": phi.index_select(0, first).sum(1)}
)"}),
                                                  dir, "undeclared_aux.pt"));
  EXPECT_NE(undeclared.find("has an aux method but no aux_terms"), std::string::npos) << undeclared;
}

TEST(TorchScriptConditionModule, EveryUnusableModuleIsOneSentenceAtBuildTime) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  const auto error_of = [&](const torch::jit::Module& m, const std::string& name) {
    return build_error(save(m, dir, name));
  };
  EXPECT_NE(error_of(script({kWeights}), "no_embed.pt").find("has no method 'embed'"),
            std::string::npos);
  EXPECT_NE(error_of(script({kEmbed}), "no_weights.pt").find("needs a method weights("),
            std::string::npos);
  EXPECT_NE(error_of(script({kEmbed, kWeights}, "", false), "no_k.pt")
                .find("needs an attribute num_embeddings: int"),
            std::string::npos);
  // Each condition of the dataset is scored by its embedding: K below the conditions is refused
  // here, so that scoring need not check the conditions (nn::condition_one_hot).
  const fs::path too_few = save(script({kEmbed}, "conditioned"), dir, "too_few.pt");
  try {
    wscsl::testing::build<ConditionModule>("torchscript", "file = \"" + too_few.string() + "\"",
                                           wscsl::testing::facts(kK + 1, kD));
    ADD_FAILURE() << "a conditioned module with fewer embeddings than conditions was built";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("{}: a conditioned module scores each triplet by the embedding its "
                          "condition names, and num_embeddings = {} leaves conditions of the "
                          "dataset's {} without one",
                          too_few.string(), kK, kK + 1));
  }
  EXPECT_NE(error_of(script({kEmbed, kWeights}, "semi"), "semi.pt")
                .find("must be \"weak\" or \"conditioned\", not \"semi\""),
            std::string::npos);
  const std::string flat = error_of(script({R"(
def embed(self, phi):
    return phi.mm(self.proj.t())
)",
                                            kWeights}),
                                    "flat.pt");
  EXPECT_NE(flat.find("embed must return floating psi [B, K = 3, E]; for phi [4, 6] it returned "
                      "Float [4, 12]"),
            std::string::npos)
      << flat;
  const std::string unnormalised = error_of(script({kEmbed, R"(
def weights(self, phi, first, second, third: Optional[Tensor]):
    return torch.sigmoid(phi.index_select(0, first).mm(self.gate.t())) + 1.0
)"}),
                                            "unnormalised.pt");
  EXPECT_NE(unnormalised.find("the rows of weights must sum to 1"), std::string::npos)
      << unnormalised;
  const std::string per_item = error_of(script({kEmbed, R"(
def weights(self, phi, first, second, third: Optional[Tensor]):
    return torch.softmax(phi.mm(self.gate.t()), dim=1)
)"}),
                                        "per_item.pt");
  EXPECT_NE(per_item.find("weights must return floating [B, K = 3]; for phi [4, 6] and the "
                          "triplets first, second, third [2] it returned Float [4, 3]"),
            std::string::npos)
      << per_item;
}
