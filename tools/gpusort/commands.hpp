// The gpusort CLI is one CLI11 app; each subcommand lives in its own file and registers itself
// with a static CommandRegistration, so main.cpp needs no list of them.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpusort::cli {

using AddCommand = std::function<void(CLI::App& app)>;

std::vector<AddCommand>& command_registry();

// A byte count: decimal digits, then optionally K, M, G or T (powers of 1024; "KB", "KiB" too).
// Throws gpusort::Error naming `option` and the text.
uint64_t parse_bytes(const std::string& text, const std::string& option);

struct CommandRegistration {
  explicit CommandRegistration(AddCommand add) { command_registry().push_back(std::move(add)); }
};

}  // namespace gpusort::cli
