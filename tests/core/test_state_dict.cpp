// State dicts in torch.save's format: what is written reads back, a module loads only what fits
// (each mismatch named), and every file LibTorch cannot take is one sentence naming it.
#include <gtest/gtest.h>

#include <fstream>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/linear.h>

#include "wscsl/error.hpp"
#include "wscsl/nn/state_dict.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using wscsl::nn::StateDict;

namespace {

struct Net : torch::nn::Module {
  Net() {
    fc = register_module("fc", torch::nn::Linear(3, 2));
    bn = register_module("bn", torch::nn::BatchNorm1d(2));
  }
  torch::nn::Linear fc{nullptr};
  torch::nn::BatchNorm1d bn{nullptr};
};

StateDict state_of(torch::nn::Module& m) {
  StateDict out;
  for (const auto& p : m.named_parameters())
    out.emplace_back(p.key(), p.value().detach().clone());
  for (const auto& b : m.named_buffers())
    out.emplace_back(b.key(), b.value().clone());
  return out;
}

std::string read_error(const fs::path& file) {
  try {
    wscsl::nn::read_state_dict(file);
  } catch (const wscsl::DataError& e) {
    return e.what();
  }
  return "(no error)";
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

void write_pickle(const fs::path& file, const c10::IValue& value) {
  const std::vector<char> bytes = torch::jit::pickle_save(value);
  write_bytes(file, std::string(bytes.begin(), bytes.end()));
}

}  // namespace

TEST(StateDict, WhatIsWrittenReadsBackInOrder) {
  wscsl::testing::ScratchDir dir("state_dict");
  const StateDict written = {{"b.weight", torch::randn({2, 3})},
                             {"a.count", torch::tensor(std::int64_t{7})},
                             {"a.view", torch::arange(12.0).view({3, 4}).t()}};
  wscsl::nn::write_state_dict(dir.path() / "w.pt", written);
  const StateDict read = wscsl::nn::read_state_dict(dir.path() / "w.pt");
  ASSERT_EQ(read.size(), written.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].first, written[i].first);
    EXPECT_TRUE(torch::equal(read[i].second, written[i].second)) << read[i].first;
  }
}

TEST(StateDict, LoadsWhatFitsAndNamesEveryMismatch) {
  Net source, target;
  torch::NoGradGuard no_grad;
  source.bn->running_mean.fill_(0.5);
  StateDict state = state_of(source);
  EXPECT_TRUE(wscsl::nn::load_state_dict(target, state).empty());
  EXPECT_TRUE(torch::equal(target.fc->weight, source.fc->weight));
  EXPECT_TRUE(torch::equal(target.bn->running_mean, source.bn->running_mean));

  Net untouched;
  const torch::Tensor before = untouched.fc->weight.clone();
  state.erase(state.begin());  // fc.weight
  state.emplace_back("head.weight", torch::zeros({1}));
  for (auto& [name, tensor] : state)
    if (name == "bn.weight") tensor = torch::ones({5});
  const std::vector<std::string> problems = wscsl::nn::load_state_dict(untouched, state);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0], "'bn.weight' is [5] in the file and [2] here");
  EXPECT_EQ(problems[1], "unexpected entry 'head.weight'");
  EXPECT_EQ(problems[2], "missing entry 'fc.weight'");
  EXPECT_TRUE(torch::equal(untouched.fc->weight, before)) << "nothing is copied on a mismatch";

  wscsl::nn::StateDictMatch match;
  match.ignored = [](const std::string& name) { return name.rfind("head.", 0) == 0; };
  match.optional = [](const std::string& name) { return name.rfind("fc.", 0) == 0; };
  for (auto& [name, tensor] : state)
    if (name == "bn.weight") tensor = torch::full({2}, 3.0);
  EXPECT_TRUE(wscsl::nn::load_state_dict(untouched, state, match).empty());
  EXPECT_TRUE(torch::equal(untouched.bn->weight, torch::full({2}, 3.0)));
  EXPECT_TRUE(torch::equal(untouched.fc->weight, before)) << "an optional entry keeps its value";
}

TEST(StateDict, EveryUnreadableFileIsOneSentenceNamingIt) {
  wscsl::testing::ScratchDir dir("state_dict");
  const fs::path good = dir.path() / "good.pt";
  wscsl::nn::write_state_dict(good, {{"w", torch::randn({64, 64})}});
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});

  const auto expect_refused = [&](const std::string& name, const std::string& bytes_or_empty,
                                  const std::string& expected) {
    const fs::path file = dir.path() / name;
    if (!bytes_or_empty.empty()) write_bytes(file, bytes_or_empty);
    const std::string message = read_error(file);
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  };
  expect_refused("truncated.pt", bytes.substr(0, bytes.size() / 2), "truncated or damaged");
  expect_refused("legacy.pt", std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20", 10),
                 "from before 1.6");
  expect_refused("text.pt", "not weights", "no zip archive");
  expect_refused("absent.pt", "", "absent.pt");

  write_pickle(dir.path() / "none.pt", c10::IValue());
  expect_refused("none.pt", "", "holds a NoneType where a dict of tensors was expected");
  write_pickle(dir.path() / "list.pt", c10::List<std::int64_t>({1, 2}));
  expect_refused("list.pt", "", "where a dict of tensors was expected");
  c10::Dict<std::string, std::int64_t> numbers;
  numbers.insert("epoch", 3);
  write_pickle(dir.path() / "numbers.pt", numbers);
  expect_refused("numbers.pt", "", "'epoch' is a int, not a tensor");
}
