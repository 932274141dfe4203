#include "cli/cli.hpp"

int main(int argc, char** argv) {
  return smtrace::cli::main(argc, argv);
}
