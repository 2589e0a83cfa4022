// gpusort command-line tool: subcommands register themselves (commands.hpp). Every failure ends
// in one line "gpusort: error: ..." on stderr and exit status 1.
#include "commands.hpp"

#include <gpusort/gpusort.hpp>

#include <cstdio>
#include <exception>

namespace gpusort::cli {
std::vector<AddCommand>& command_registry() {
  static std::vector<AddCommand> registry;
  return registry;
}
}  // namespace gpusort::cli

int main(int argc, char** argv) {
  CLI::App app{"gpusort: sort arrays on the GPU (Vulkan compute)"};
  app.require_subcommand(1);
  // Usage errors too are one line in the same form (`gpusort sort --help` shows the usage).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("gpusort: error: ") + e.what() + "\n";
  });
  for (auto& add : gpusort::cli::command_registry()) add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // --help exits 0; usage errors 1 like every other failure
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpusort: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
