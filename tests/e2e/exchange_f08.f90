! A ring exchange with the mpi_f08 bindings (3 ranks): each rank posts
! MPI_Irecv from its left neighbour and MPI_Isend to its right one, completes
! both with MPI_Waitall, then MPI_Allreduce (MPI_IN_PLACE) and MPI_Bcast on a
! duplicated communicator that it frees. Correct: no finding. Bug (argument
! `bug`): the receive buffer is sent again (MPI_Send to the left) before the
! MPI_Waitall completes the receive (local-concurrency).
program exchange_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 16
  integer :: out(n), in(n), rank, nprocs, left, right, total, i
  type(MPI_Request) :: requests(2)
  type(MPI_Comm) :: dup
  character(len=16) :: arg
  logical :: bug

  call MPI_Init()
  arg = ''
  if (command_argument_count() > 0) call get_command_argument(1, arg)
  bug = trim(arg) == 'bug'
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)

  out = [(rank * 100 + i, i = 1, n)]
  in = -1
  call MPI_Irecv(in, n, MPI_INTEGER, left, 0, MPI_COMM_WORLD, requests(1))
  call MPI_Isend(out, n, MPI_INTEGER, right, 0, MPI_COMM_WORLD, requests(2))
  if (bug) then
    ! bug: the pending MPI_Irecv may still write in
    call MPI_Send(in, n, MPI_INTEGER, left, 1, MPI_COMM_WORLD)
    call MPI_Recv(out, n, MPI_INTEGER, right, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end if
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
  if (in(n) /= left * 100 + n) call MPI_Abort(MPI_COMM_WORLD, 98)

  total = rank
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (total /= nprocs * (nprocs - 1) / 2) call MPI_Abort(MPI_COMM_WORLD, 97)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Bcast(total, 1, MPI_INTEGER, 0, dup)
  call MPI_Comm_free(dup)

  call MPI_Finalize()
end program exchange_f08
