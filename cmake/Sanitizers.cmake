# Sanitizer and fuzzing flags for every target (SMTRACE_SANITIZE, SMTRACE_FUZZ;
# see CMakeLists.txt). Set before any target is made, so that the generated
# protobuf code and the libraries are instrumented alike.
set(smtrace_sanitize "${SMTRACE_SANITIZE}")
if(SMTRACE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SMTRACE_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  set(smtrace_sanitize "fuzzer-no-link,address,undefined")
endif()
if(smtrace_sanitize)
  message(STATUS "smtrace: -fsanitize=${smtrace_sanitize}")
  # UBSan: stop at the first report (a test that passes has none), and no
  # recovery so that the fuzzer sees it as a crash.
  set(smtrace_sanitize_flags -fsanitize=${smtrace_sanitize} -fno-omit-frame-pointer -g)
  if(smtrace_sanitize MATCHES "undefined")
    list(APPEND smtrace_sanitize_flags -fno-sanitize-recover=all)
  endif()
  add_compile_options(${smtrace_sanitize_flags})
  # GCC 12's -Wmaybe-uninitialized is wrong under -fsanitize=address at -O2
  # (std::function inside libstdc++'s std::regex: a known false positive):
  # off in sanitizer builds only, where -Werror would otherwise stop them.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(smtrace_settings INTERFACE -Wno-maybe-uninitialized)
  endif()
  string(REPLACE "fuzzer-no-link," "" smtrace_sanitize_link "${smtrace_sanitize}")
  add_link_options(-fsanitize=${smtrace_sanitize_link})
endif()
