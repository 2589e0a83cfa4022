// gpusort command-line tool: subcommands register themselves (commands.hpp). Every failure ends
// in one line "gpusort: error: ..." on stderr and exit status 1.
#include <csignal>
#include <cstdio>
#include <exception>
#include <gpusort/gpusort.hpp>

#include "commands.hpp"

namespace gpusort::cli {
std::vector<AddCommand>& command_registry() {
  static std::vector<AddCommand> registry;
  return registry;
}
}  // namespace gpusort::cli

int main(int argc, char** argv) {
  // A write beyond the file-size limit (ulimit -f) fails with EFBIG, reported by name with the
  // limit, instead of SIGXFSZ ending the process silently with its temporary files left behind
  // (the Vulkan driver's shader cache writes files too, before any output exists).
  ::signal(SIGXFSZ, SIG_IGN);
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
