#include <cstdio>
#include <new>

#include "cli/cli.hpp"
#include "cli/common.hpp"

int main(int argc, char** argv) {
  // Memory can run out before cli::main's own handlers are in place (while
  // it builds the command-line parser): an error too, never std::terminate.
  try {
    return smtrace::cli::main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("smtrace: error: out of memory\n", stderr);
    return smtrace::cli::k_exit_usage;
  }
}
