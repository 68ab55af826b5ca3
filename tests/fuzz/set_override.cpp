// `--set key=value` overrides: each input line is applied to a small pipeline, which must then
// still be writable and readable as TOML.
#include <sstream>
#include <stdexcept>

#include "fuzz_target.hpp"
#include "wscsl/config/toml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const wscsl::ConfigNode base = wscsl::parse_toml(R"(
[trainer]
lr = 0.1
epochs = 2
[[losses]]
type = "margin"
[[evaluators]]
type = "alignment"
fractions = [0.1, 0.5]
)",
                                                          "base.toml");
  return fuzz_text(data, size, [](const std::string& text) {
    wscsl::ConfigNode root = base;
    wscsl::Diagnostics diagnostics;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line))
      wscsl::apply_override(root, line, diagnostics);
    const std::string written = wscsl::to_toml(root);
    try {
      wscsl::parse_toml(written, "written.toml");
    } catch (const wscsl::Error& e) {
      throw std::logic_error("an override made a tree to_toml cannot write: " +
                             std::string(e.what()) + "\n" + written);
    }
  });
}
