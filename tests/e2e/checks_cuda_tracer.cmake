# The CUPTI tracer end to end (tests/e2e/cuda_tracer.sh): a CUDA program
# under the tracer, with or without a GPU. Registered when the tracer was
# built with CUPTI and the CUDA runtime can be linked (the program needs no
# nvcc).
if(TARGET smtrace::tracer_cupti)
  find_package(CUDAToolkit QUIET)
endif()
if(TARGET smtrace::tracer_cupti AND TARGET CUDA::cudart)
  smtrace_e2e_program(cuda_tracer cuda_tracer.c)
  target_link_libraries(e2e_cuda_tracer PRIVATE CUDA::cudart)
  add_test(NAME e2e.cuda_tracer
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cuda_tracer.sh $<TARGET_FILE:smtrace_cli> $<TARGET_FILE:e2e_cuda_tracer>)
  set_tests_properties(e2e.cuda_tracer PROPERTIES LABELS e2e TIMEOUT 60 PROCESSORS 2)
endif()
