// `wscsl make-splits`: the split files of attribute-specific retrieval (the layout ASEN++ released
// for FashionAI, DARN and DeepFashion, attribute_split_files.hpp) written from a dataset's
// per-image attributes, e.g. an image_folder of the user's own images.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "command.hpp"

namespace wscsl::host {

class MakeSplitsCommand final : public Command {
 public:
  explicit MakeSplitsCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  std::filesystem::path pipeline_;
  std::vector<std::string> overrides_;
  std::filesystem::path out_;
  double query_fraction_ = 0.25;
  std::int64_t seed_ = 0;
};

}  // namespace wscsl::host
