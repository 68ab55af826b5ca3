// One command of `wscsl`: it adds its subcommand, with every option of its own, to the parser, and
// runs with the global options and the world when the parser chose it. main.cpp lists them.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "distributed/world.hpp"
#include "pipeline/session.hpp"

namespace wscsl::host {

// What every command runs with.
struct Invocation {
  GlobalOptions global;
  // The job this process is one of: read from the environment for a data-parallel command, one
  // process for the others.
  World world;
  std::vector<std::string> arguments;  // the command line after the program's name
};

// A command line that the parser accepts but the command cannot run: exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Command {
 public:
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  bool parsed() const { return subcommand_->parsed(); }
  // Whether the command runs as one process of a data-parallel job (train, eval, embed), whose
  // world a launcher describes in the environment.
  virtual bool data_parallel() const { return false; }
  // Returns the process's exit status; errors propagate as exceptions (CommandLine::run).
  virtual int run(const Invocation& invocation) = 0;

 protected:
  // Adds the subcommand `name` to `app`.
  Command(CLI::App& app, const std::string& name, const std::string& description)
      : subcommand_(app.add_subcommand(name, description)) {}
  CLI::App& subcommand() const { return *subcommand_; }

 private:
  CLI::App* subcommand_;
};

// The parser of `wscsl`: its global options (--plugin-path, --version) and the commands added to
// it, in the order `--help` lists them.
class CommandLine {
 public:
  explicit CommandLine(const std::string& description);

  template <class C>
  CommandLine& add() {
    commands_.push_back(std::make_unique<C>(app_));
    return *this;
  }

  // Parses the command line and runs the command it names. Returns the exit status: 0, 2 for a
  // command line or a configuration that is wrong, 3 for plugins that cannot be used, 1 for any
  // other error, each reported as one message on standard error.
  int run(int argc, char** argv);

 private:
  CLI::App app_;
  GlobalOptions global_;
  std::vector<std::unique_ptr<Command>> commands_;
};

}  // namespace wscsl::host
