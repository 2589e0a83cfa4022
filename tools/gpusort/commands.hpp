// The gpusort CLI is one CLI11 app; each subcommand lives in its own file and registers itself
// with a static CommandRegistration, so main.cpp needs no list of them.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace gpusort::cli {

using AddCommand = std::function<void(CLI::App& app)>;

std::vector<AddCommand>& command_registry();

struct CommandRegistration {
  explicit CommandRegistration(AddCommand add) { command_registry().push_back(std::move(add)); }
};

}  // namespace gpusort::cli
