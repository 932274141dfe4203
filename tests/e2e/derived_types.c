/* Derived datatypes in Send/Recv (2 ranks): vector, indexed, struct and
 * subarray. The checker compares each DatatypeDef's footprint and signature
 * with what these constructors describe. */
#include <stddef.h>

#include "e2e_util.h"

struct Particle {
  int id;
  double mass;
  char tag[3];
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = e2e_rank(MPI_COMM_WORLD);
  E2E_REQUIRE(e2e_size(MPI_COMM_WORLD) == 2);

  /* vector: 100 doubles, every 4th: one strided run. */
  MPI_Datatype vec;
  MPI_Type_vector(100, 1, 4, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);

  /* indexed: ints {0,1}, {5,6,7}, {10}. */
  MPI_Datatype idx;
  int blens[3] = {2, 3, 1}, disps[3] = {0, 5, 10};
  MPI_Type_indexed(3, blens, disps, MPI_INT, &idx);
  MPI_Type_commit(&idx);

  /* struct: id, mass, tag[3]. */
  MPI_Datatype st;
  int sblens[3] = {1, 1, 3};
  MPI_Aint sdisps[3] = {offsetof(struct Particle, id), offsetof(struct Particle, mass),
                        offsetof(struct Particle, tag)};
  MPI_Datatype stypes[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(3, sblens, sdisps, stypes, &st);
  MPI_Type_commit(&st);

  /* subarray: rows 2..5, columns 1..3 of an 8x8 int matrix. */
  MPI_Datatype sub;
  int sizes[2] = {8, 8}, subsizes[2] = {4, 3}, starts[2] = {2, 1};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub);
  MPI_Type_commit(&sub);

  double v[400];
  int ix[11];
  struct Particle p;
  int m[8][8];
  if (rank == 0) {
    for (int i = 0; i < 400; ++i) v[i] = i;
    for (int i = 0; i < 11; ++i) ix[i] = i;
    p.id = 7;
    p.mass = 2.5;
    p.tag[0] = 'a';
    p.tag[1] = 'b';
    p.tag[2] = 'c';
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) m[i][j] = 10 * i + j;
    MPI_Send(v, 1, vec, 1, 1, MPI_COMM_WORLD);
    MPI_Send(ix, 1, idx, 1, 2, MPI_COMM_WORLD);
    MPI_Send(&p, 1, st, 1, 3, MPI_COMM_WORLD);
    MPI_Send(m, 1, sub, 1, 4, MPI_COMM_WORLD);
  } else {
    for (int i = 0; i < 400; ++i) v[i] = -1;
    for (int i = 0; i < 11; ++i) ix[i] = -1;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) m[i][j] = -1;
    MPI_Recv(v, 1, vec, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(ix, 1, idx, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&p, 1, st, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(m, 1, sub, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 400; ++i) E2E_REQUIRE(v[i] == (i % 4 == 0 ? i : -1));
    E2E_REQUIRE(ix[0] == 0 && ix[1] == 1 && ix[2] == -1 && ix[5] == 5 && ix[7] == 7 && ix[10] == 10);
    E2E_REQUIRE(p.id == 7 && p.mass == 2.5 && p.tag[2] == 'c');
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        const int inside = i >= 2 && i < 6 && j >= 1 && j < 4;
        E2E_REQUIRE(m[i][j] == (inside ? 10 * i + j : -1));
      }
  }

  MPI_Type_free(&vec);
  MPI_Type_free(&idx);
  MPI_Type_free(&st);
  MPI_Type_free(&sub);
  MPI_Finalize();
  return 0;
}
