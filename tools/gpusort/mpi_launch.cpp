// gpusort started by an MPI launcher (mpirun) with several ranks: `gpusort sort` is collective,
// and runs in gpusort-mpi, the same CLI linked with MPI (distributed/collective_sort.cpp), which
// this binary executes in its own place, from its own directory, with the same arguments. So
// gpusort itself needs no MPI library to start, and without a launcher nothing here runs.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gpusort/gpusort.hpp>
#include <iterator>
#include <string>
#include <vector>

#include "sort_arguments.hpp"

namespace gpusort::cli {

// The number of processes an MPI launcher started, from its environment (0: none).
long launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (const char* value = std::getenv(name); value && *value) return std::atol(value);
  return 0;
}

namespace {

const bool registered = [] {
  if (collective_sort()) return true;  // gpusort-mpi: the collective sort is linked in
  collective_sort() = [](const SortArguments&) -> bool {
    if (launched_ranks() <= 1) return false;
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path mpi = self.parent_path() / "gpusort-mpi";
    if (ec || !std::filesystem::exists(mpi))
      throw Error("started by an MPI launcher with " + std::to_string(launched_ranks()) +
                  " ranks, but gpusort-mpi (the collective sort, built where MPI is found) is "
                  "not beside this gpusort" +
                  (ec ? std::string() : " in '" + self.parent_path().string() + "'"));
    // The arguments as given (argv), from /proc/self/cmdline.
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> words;
    for (size_t at = 0; at < all.size();) {
      const size_t end = all.find('\0', at);
      words.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
      if (end == std::string::npos) break;
      at = end + 1;
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(mpi.c_str()));
    for (size_t i = 1; i < words.size(); ++i) argv.push_back(words[i].data());
    argv.push_back(nullptr);
    ::execv(mpi.c_str(), argv.data());
    throw Error("cannot run '" + mpi.string() + "': " + std::strerror(errno));
  };
  return true;
}();

}  // namespace
}  // namespace gpusort::cli
