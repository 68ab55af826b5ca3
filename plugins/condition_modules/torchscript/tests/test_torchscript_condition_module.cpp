#include <gtest/gtest.h>

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
// weights softmax(φ_a Gᵀ).
const char* const kEmbed = R"(
def embed(self, phi):
    return phi.mm(self.proj.t()).view(phi.size(0), 3, 4)
)";
const char* const kWeights = R"(
def weights(self, phi_a, phi_c, phi_f):
    return torch.softmax(phi_a.mm(self.gate.t()), dim=1)
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

}  // namespace

TEST(TorchScriptConditionModule, FusesTheScriptsDistancesUnderItsWeights) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  auto m = module_from(save(script({kEmbed, kWeights}), dir, "weak.pt"));
  EXPECT_EQ(m->num_embeddings(), kK);
  EXPECT_EQ(m->output_dim(), kE);
  EXPECT_EQ(m->supervision(), Supervision::Weak);

  const TripletInput in = wscsl::testing::random_triplets(*m, 5, kD);
  const torch::Tensor proj = param(*m, "proj"), gate = param(*m, "gate");
  const auto psi = [&](const torch::Tensor& phi) { return phi.mm(proj.t()).view({5, kK, kE}); };
  EXPECT_TRUE(torch::allclose(in.psi_anchor, psi(in.phi_anchor)));
  const TripletScores s = m->score(in);
  const torch::Tensor w = torch::softmax(in.phi_anchor.mm(gate.t()), 1);
  const torch::Tensor close = (psi(in.phi_anchor) - psi(in.phi_close)).norm(2, 2);
  const torch::Tensor far = (psi(in.phi_anchor) - psi(in.phi_far)).norm(2, 2);
  EXPECT_TRUE(torch::allclose(s.weights, w));
  EXPECT_TRUE(torch::allclose(s.fused_close, (w * close).sum(1), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(s.fused_far, (w * far).sum(1), 1e-5, 1e-6));

  (s.fused_close - s.fused_far).sum().backward();
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
  const TripletInput in = wscsl::testing::random_triplets(*m, 4, kD);
  EXPECT_TRUE(torch::allclose(m->distances(in.psi_anchor, in.psi_far),
                              (in.psi_anchor - in.psi_far).abs().sum(2)));
}

TEST(TorchScriptConditionModule, AConditionedModuleSelectsTheTripletsCondition) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  const fs::path file = save(script({kEmbed}, "conditioned"), dir, "conditioned.pt");
  auto m = module_from(file);
  EXPECT_EQ(m->supervision(), Supervision::Conditioned);
  TorchScriptConditionModule::Options options;
  options.file = file.string();
  const Contract contract = TorchScriptConditionModule::contract_of(options);
  ASSERT_EQ(contract.needs.size(), 1u);
  EXPECT_EQ(contract.needs[0].resource, Resource::TripletConditions);

  const TripletInput in = wscsl::testing::random_triplets(*m, 6, kD, /*with_conditions=*/true);
  const TripletScores s = m->score(in);
  for (std::int64_t i = 0; i < 6; ++i) {
    const std::int64_t c = in.conditions[i].item<std::int64_t>();
    EXPECT_FLOAT_EQ(s.fused_close[i].item<float>(), s.close_distances[i][c].item<float>());
  }
}

TEST(TorchScriptConditionModule, ItsAuxTermsReachTheScoresAndItsContract) {
  wscsl::testing::ScratchDir dir("torchscript_module");
  torch::jit::Module m = script({kEmbed, kWeights, R"(
def aux(self, phi_a, phi_c, phi_f):
    return {"gate_norm": phi_a.mm(self.gate.t()).abs().sum(1)}
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
  const TripletInput in = wscsl::testing::random_triplets(*module, 4, kD);
  const TripletScores s = module->score(in);
  ASSERT_EQ(s.aux.count("gate_norm"), 1u);
  EXPECT_TRUE(torch::allclose(s.aux.at("gate_norm"),
                              in.phi_anchor.mm(param(*module, "gate").t()).abs().sum(1)));

  torch::jit::Module wrong = script({kEmbed, kWeights, R"(
def aux(self, phi_a, phi_c, phi_f):
    return {"other": phi_a.sum(1)}
)"});
  wrong.register_attribute("aux_terms", c10::ListType::ofStrings(),
                           c10::List<std::string>({"gate_norm"}));
  const std::string message = build_error(save(wrong, dir, "wrong_aux.pt"));
  EXPECT_NE(message.find("exactly its aux_terms (gate_norm); it returned [other]"),
            std::string::npos)
      << message;
  const std::string undeclared = build_error(save(script({kEmbed, kWeights, R"(
def aux(self, phi_a, phi_c, phi_f):
    return {"other": phi_a.sum(1)}
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
  EXPECT_NE(error_of(script({kEmbed, kWeights}, "semi"), "semi.pt")
                .find("must be \"weak\" or \"conditioned\", not \"semi\""),
            std::string::npos);
  const std::string flat = error_of(script({R"(
def embed(self, phi):
    return phi.mm(self.proj.t())
)",
                                            kWeights}),
                                    "flat.pt");
  EXPECT_NE(flat.find("embed must return floating psi [B, K = 3, E]; for phi [2, 6] it returned "
                      "Float [2, 12]"),
            std::string::npos)
      << flat;
  const std::string unnormalised = error_of(script({kEmbed, R"(
def weights(self, phi_a, phi_c, phi_f):
    return torch.sigmoid(phi_a.mm(self.gate.t())) + 1.0
)"}),
                                            "unnormalised.pt");
  EXPECT_NE(unnormalised.find("the rows of weights must sum to 1"), std::string::npos)
      << unnormalised;
}
