! isend_reuse_f.f90 through mpif.h (2 ranks): rank 0 receives into the
! buffer of a pending MPI_Isend. Fixed (argument `fixed`): it waits first.
program isend_reuse_fh
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 100
  integer :: buf(n), rank, nprocs, request, ierr, i
  character(len=16) :: arg
  logical :: fixed

  call MPI_Init(ierr)
  arg = ''
  if (command_argument_count() > 0) call get_command_argument(1, arg)
  fixed = trim(arg) == 'fixed'
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 2) call MPI_Abort(MPI_COMM_WORLD, 99, ierr)

  if (rank == 0) then
    buf = [(i, i = 1, n)]
    call MPI_Isend(buf, n, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, request, ierr)
    if (fixed) call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    ! bug: the send may still read buf
    call MPI_Recv(buf, n, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    if (.not. fixed) call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    if (buf(n) /= 2 * n) call MPI_Abort(MPI_COMM_WORLD, 98, ierr)
  else
    call MPI_Recv(buf, n, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    buf = 2 * buf
    call MPI_Send(buf, n, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, ierr)
  end if

  call MPI_Finalize(ierr)
end program isend_reuse_fh
