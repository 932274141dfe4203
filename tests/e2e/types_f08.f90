! Fortran datatypes in the signature and op rules (`use mpi_f08`, 2 ranks).
! Modes (argument 1), each a bug of MPI-3.1, and `fixed` for none:
!   p2p     rank 0 sends 4 x MPI_INTEGER, rank 1 receives 4 x MPI_REAL
!           (section 3.3.1: the types differ although both are 4 bytes)
!   bcast   the root broadcasts MPI_INTEGER, the other rank takes MPI_REAL
!   logical MPI_SUM on MPI_LOGICAL (section 5.9.2: not defined; Open MPI
!           aborts in it)
! fixed: the same calls with matching types, MPI_LOR on MPI_LOGICAL, MPI_SUM
! on MPI_DOUBLE_COMPLEX and MPI_MAXLOC on MPI_2INTEGER.
program types_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, ivals(4), pair(2), best(2)
  real :: rvals(4)
  logical :: flag, any_flag
  complex(kind=8) :: z, zsum
  character(len=16) :: mode

  call MPI_Init()
  mode = 'fixed'
  if (command_argument_count() > 0) call get_command_argument(1, mode)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (nprocs /= 2) call MPI_Abort(MPI_COMM_WORLD, 99)
  ivals = rank
  rvals = real(rank)
  flag = rank == 1

  if (rank == 0) then
    call MPI_Send(ivals, 4, MPI_INTEGER, 1, 0, MPI_COMM_WORLD)
  else if (trim(mode) == 'p2p') then
    call MPI_Recv(rvals, 4, MPI_REAL, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)  ! bug
  else
    call MPI_Recv(ivals, 4, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end if

  if (rank == 1 .and. trim(mode) == 'bcast') then
    call MPI_Bcast(rvals, 2, MPI_REAL, 0, MPI_COMM_WORLD)  ! bug
  else
    call MPI_Bcast(ivals, 2, MPI_INTEGER, 0, MPI_COMM_WORLD)
  end if

  if (trim(mode) == 'logical') then
    call MPI_Allreduce(flag, any_flag, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD)  ! bug
  else
    call MPI_Allreduce(flag, any_flag, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
    z = cmplx(rank, 1, kind=8)
    call MPI_Allreduce(z, zsum, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD)
    pair = [rank, rank]
    call MPI_Allreduce(pair, best, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD)
  end if
  call MPI_Finalize()
end program types_f08
