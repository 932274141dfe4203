# Settings every smtrace target links PRIVATE: warnings, and -Werror in CI.
# -Wall includes -Wswitch: a switch on Call or on a column of calls.def lists
# every value and has no default (test_trace_format_call_semantics.cpp checks
# the default), so a new call or column value a switch forgot fails the CI
# build (SMTRACE_WERROR, on in scripts/bootstrap.sh test).
add_library(smtrace_settings INTERFACE)
target_compile_options(smtrace_settings INTERFACE
  -Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local> $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
  $<$<BOOL:${SMTRACE_WERROR}>:-Werror>)
# Sources include each other by folder: "trace_format/event.hpp".
target_include_directories(smtrace_settings INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
target_compile_definitions(smtrace_settings INTERFACE
  SMTRACE_VERSION="${PROJECT_VERSION}")
