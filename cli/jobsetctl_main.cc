// jobsetctl: the kubectl-shaped command line for jobsetd. Everything but
// reading argv and the environment lives in cli/commands.h.
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return jobset::cli::Main(args, std::getenv("JOBSET_SERVER"),
                           jobset::cli::Io());
}
