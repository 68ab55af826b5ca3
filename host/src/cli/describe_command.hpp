// `wscsl describe`: every option of a component type, or of [trainer], as text, JSON or a Markdown
// table.
#pragma once

#include <string>

#include "command.hpp"

namespace wscsl::host {

class DescribeCommand final : public Command {
 public:
  explicit DescribeCommand(CLI::App& app);
  int run(const Invocation& invocation) override;

 private:
  std::string what_;  // <kind>/<type>, or "trainer"
  bool json_ = false;
  bool markdown_ = false;
};

}  // namespace wscsl::host
