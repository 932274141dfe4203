# Fortran programs (issue 14): Open MPI's Fortran bindings call PMPI_*
# directly, so these are recorded by the tracer's mpi_<call>_ and
# mpi_<call>_f08_ wrappers. Needs gfortran (scripts/bootstrap.sh installs it).
include(CheckLanguage)
check_language(Fortran)
if(CMAKE_Fortran_COMPILER)
  enable_language(Fortran)
  find_package(MPI COMPONENTS Fortran)
endif()
if(NOT MPI_Fortran_FOUND)
  message(WARNING "no Fortran compiler with MPI: the Fortran e2e cases are not built (install gfortran)")
  return()
endif()

foreach(program isend_reuse_f isend_reuse_fh exchange_f08 types_f08)
  add_executable(e2e_${program} ${program}.f90)
  target_link_libraries(e2e_${program} PRIVATE MPI::MPI_Fortran)
  target_compile_options(e2e_${program} PRIVATE -g -O0 -Wall $<$<BOOL:${SMTRACE_WERROR}>:-Werror>)
  # Each program's module files apart (mpi_f08 programs use no module of ours).
  set_target_properties(e2e_${program} PROPERTIES Fortran_MODULE_DIRECTORY
    ${CMAKE_CURRENT_BINARY_DIR}/fortran_modules/${program})
endforeach()

# `use mpi` and mpif.h: a receive into the buffer of a pending MPI_Isend.
smtrace_check_test(fortran_isend_reuse isend_reuse_f 2 30 --finds local-concurrency)
smtrace_check_test(fortran_isend_reuse_fixed isend_reuse_f 2 30 --clean ARGS fixed)
smtrace_check_test(fortran_isend_reuse_mpifh isend_reuse_fh 2 30 --finds local-concurrency)
smtrace_check_test(fortran_isend_reuse_mpifh_fixed isend_reuse_fh 2 30 --clean ARGS fixed)
# `use mpi_f08`: a correct ring exchange, and one that reuses a pending receive's buffer.
smtrace_check_test(fortran_f08_exchange exchange_f08 3 30 --clean)
smtrace_check_test(fortran_f08_exchange_overlap exchange_f08 3 30 --finds local-concurrency ARGS bug)
# Fortran datatypes in the classes of MPI-3.1 section 5.9.2: signatures and ops.
smtrace_check_test(fortran_types_p2p types_f08 2 30 --finds type-mismatch
  --report-has "rank 0 sends 4 x MPI_INTEGER and rank 1 receives 4 x MPI_REAL" ARGS p2p)
smtrace_check_test(fortran_types_bcast types_f08 2 30 --finds collective-mismatch ARGS bcast)
smtrace_check_test(fortran_types_logical types_f08 2 40 --expect-fail --kill-after 20 --finds invalid-argument
  --report-has "MPI_SUM is not defined for MPI_LOGICAL" ARGS logical)
smtrace_check_test(fortran_types_fixed types_f08 2 30 --clean ARGS fixed)
