// jobsetctl: the kubectl-shaped command line for jobsetd. Everything but
// reading argv, the environment and the real clock lives in cli/commands.h.
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  jobset::cli::Environment env;
  env.server = std::getenv("JOBSET_SERVER");
  env.config = std::getenv("JOBSETCONFIG");
  env.home = std::getenv("HOME");
  return jobset::cli::Main(args, env, jobset::cli::Io(),
                           *jobset::RealClock::Get());
}
