// The Fortran bindings: mpif.h and `use mpi` (symbols mpi_send_), and `use
// mpi_f08` (mpi_send_f08_). Open MPI's Fortran layer converts its
// arguments and calls the C PMPI_ functions directly, so the C wrappers
// never see a Fortran program's calls; the wrappers generated from
// wrappers.def (wrappers.cpp, "Fortran") define those two symbols of every
// traced call. Each one converts the Fortran arguments into the C values
// its shape gathers (handles with MPI_*_f2c, the Fortran sentinels
// MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE), records through the same
// shape and handlers as the C wrapper, and calls the library's own Fortran
// PMPI entry (pmpi_send_, pmpi_send_f08_, found with dlsym(RTLD_NEXT)) with
// the program's arguments, so Fortran semantics (ierror, LOGICAL flags,
// 1-based indices, status conversion) stay the library's. Outputs are read
// back through the same conversions.
//
// Included by wrappers.cpp only (the MPI layer); see tracer.hpp for the
// ground rules. MPI_Fint must be int (Open MPI's default): INTEGER arrays
// (counts, displacements, ranks) are passed through unconverted.
#pragma once

#include <dlfcn.h>
#include <mpi.h>

#include <atomic>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

static_assert(std::is_same_v<MPI_Fint, int>, "the Fortran layer passes INTEGER arrays as int arrays");

namespace smtrace::tracer::fortran {

// The addresses of the Fortran sentinels: common blocks of mpif.h, module
// variables of mpi and mpi_f08, all bound to these symbols (dlsym of the
// first definition in the process, the one every reference binds to).
struct Sentinels {
  const void* bottom = nullptr;
  const void* in_place = nullptr;
  const void* status_ignore = nullptr;
  const void* statuses_ignore = nullptr;
};
inline const Sentinels& sentinels() {
  static const Sentinels s = [] {
    Sentinels out;
    out.bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
    out.in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
    out.status_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_status_ignore_");
    out.statuses_ignore = dlsym(RTLD_DEFAULT, "mpi_fortran_statuses_ignore_");
    return out;
  }();
  return s;
}

// Return the library's Fortran PMPI entry `name` (the next definition after
// this library), looked up once; nullptr when the library has none.
inline void* resolve(const char* name, std::atomic<void*>& cache) {
  void* f = cache.load(std::memory_order_acquire);
  if (!f) {
    f = dlsym(RTLD_NEXT, name);
    if (!f) f = dlsym(RTLD_DEFAULT, name);
    cache.store(f, std::memory_order_release);
  }
  return f;
}

// Fortran INTEGERs in an MPI_Status (MPI_STATUS_SIZE).
inline constexpr std::size_t k_status_ints = sizeof(MPI_Status) / sizeof(MPI_Fint);
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0);

// True while this thread runs a Fortran wrapper (a shape may need to know:
// MPI_Buffer_detach returns no address in Fortran).
inline thread_local bool t_active = false;

inline MPI_Comm to_c(MPI_Fint f, MPI_Comm*) { return PMPI_Comm_f2c(f); }
inline MPI_Datatype to_c(MPI_Fint f, MPI_Datatype*) { return PMPI_Type_f2c(f); }
inline MPI_Group to_c(MPI_Fint f, MPI_Group*) { return PMPI_Group_f2c(f); }
inline MPI_Op to_c(MPI_Fint f, MPI_Op*) { return PMPI_Op_f2c(f); }
inline MPI_Win to_c(MPI_Fint f, MPI_Win*) { return PMPI_Win_f2c(f); }
inline MPI_Info to_c(MPI_Fint f, MPI_Info*) { return PMPI_Info_f2c(f); }
inline MPI_Request to_c(MPI_Fint f, MPI_Request*) { return PMPI_Request_f2c(f); }
inline MPI_Message to_c(MPI_Fint f, MPI_Message*) { return PMPI_Message_f2c(f); }

template <class T>
constexpr bool k_handle = std::is_same_v<T, MPI_Comm> || std::is_same_v<T, MPI_Datatype> ||
                          std::is_same_v<T, MPI_Group> || std::is_same_v<T, MPI_Op> ||
                          std::is_same_v<T, MPI_Win> || std::is_same_v<T, MPI_Info> ||
                          std::is_same_v<T, MPI_Request> || std::is_same_v<T, MPI_Message>;

// What the arguments of one call say about the lengths of its arrays.
struct Shape {
  bool first_is_count = false;  // the first parameter is an int count (Waitall, Startall, Type_create_struct)
  int count = 0;                // its value
  MPI_Comm comm = MPI_COMM_NULL;  // the communicator argument (Alltoallw's type arrays)
  format::CallTraits traits;
  int handle_arrays = 0;        // MPI_Datatype arrays met so far (send side first)
  int int_outputs = 0;          // int* parameters met so far
};

// Return the members (remote ones on an intercommunicator) or the neighbours
// (`in`: sources, else destinations) of `comm`.
inline int members_of(MPI_Comm comm, bool neighbors, bool in) {
  if (comm == MPI_COMM_NULL) return 0;
  if (neighbors) {
    int topo = MPI_UNDEFINED, n = 0, indeg = 0, outdeg = 0, weighted = 0;
    PMPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
      PMPI_Cartdim_get(comm, &n);
      return 2 * n;
    }
    if (topo == MPI_GRAPH) {
      int rank = 0;
      PMPI_Comm_rank(comm, &rank);
      PMPI_Graph_neighbors_count(comm, rank, &n);
      return n;
    }
    if (topo == MPI_DIST_GRAPH) {
      PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted);
      return in ? indeg : outdeg;
    }
    return 0;
  }
  int inter = 0, n = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) PMPI_Comm_remote_size(comm, &n);
  else PMPI_Comm_size(comm, &n);
  return n;
}

// One argument: the Fortran pointer the program passed (`f`), the C value
// the shape gathers (`c()`), the pointer handed to the library's Fortran
// entry (`fort()`), and `after()`, which reads the outputs back once that
// returned. Every argument is first converted alone, then `scan(shape)`
// (the communicator) and `prepare(shape)` (arrays, whose lengths may depend
// on a later argument) run over them in order.
template <class C, class Enable = void>
struct Arg;

// INTEGER (and INTEGER(KIND=MPI_ADDRESS_KIND), MPI_Count) by reference.
template <class C>
struct Arg<C, std::enable_if_t<std::is_arithmetic_v<C>>> {
  void* f;
  C value;
  explicit Arg(void* p) : f(p), value(p ? *static_cast<C*>(p) : C{}) {}
  void prepare(Shape&) {}
  C& c() { return value; }
  void* fort() { return f; }
  void after() {}
};

// A handle by value.
template <class C>
struct Arg<C, std::enable_if_t<k_handle<C>>> {
  void* f;
  C value;
  explicit Arg(void* p) : f(p), value(p ? to_c(*static_cast<MPI_Fint*>(p), static_cast<C*>(nullptr)) : C{}) {}
  void scan(Shape& s) {
    if constexpr (std::is_same_v<C, MPI_Comm>) s.comm = value;
  }
  void prepare(Shape&) {}
  C& c() { return value; }
  void* fort() { return f; }
  void after() {}
};

// A handle by pointer: an output (Comm_dup's new communicator), an input
// and output (Comm_free, Wait), or an array of requests (Waitall: the
// call's first argument counts them).
template <class H>
struct Arg<H*, std::enable_if_t<k_handle<H>>> {
  MPI_Fint* f;
  std::vector<H> values;
  H* pointer = nullptr;
  explicit Arg(void* p) : f(static_cast<MPI_Fint*>(p)) {}
  void prepare(Shape& s) {
    const bool array = std::is_same_v<H, MPI_Request> && s.first_is_count;
    values.resize(array ? static_cast<std::size_t>(std::max(s.count, 0)) : 1);
    convert();
    pointer = values.data();
  }
  void convert() {
    if (!f) return;
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = to_c(f[i], static_cast<H*>(nullptr));
  }
  H*& c() { return pointer; }
  void* fort() { return f; }
  void after() { convert(); }
};

// An array of datatypes (Type_create_struct, Alltoallw, Neighbor_alltoallw).
template <>
struct Arg<const MPI_Datatype*> {
  MPI_Fint* f;
  std::vector<MPI_Datatype> values;
  const MPI_Datatype* pointer = nullptr;
  explicit Arg(void* p) : f(static_cast<MPI_Fint*>(p)) {}
  void prepare(Shape& s) {
    const int which = s.handle_arrays++;
    int n = 0;
    if (s.first_is_count) n = s.count;
    else n = members_of(s.comm, s.traits.flow == format::Flow::neighbor, which > 0);
    values.resize(f ? static_cast<std::size_t>(std::max(n, 0)) : 0);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = PMPI_Type_f2c(f[i]);
    pointer = values.data();
  }
  const MPI_Datatype*& c() { return pointer; }
  void* fort() { return f; }
  void after() {}
};

// A status (or the statuses of Waitall, Testall, Waitsome, Testsome), or
// MPI_STATUS(ES)_IGNORE: the library then writes a local one, which the
// shape reads like the program's.
template <class S>
struct Arg<S*, std::enable_if_t<std::is_same_v<std::remove_const_t<S>, MPI_Status>>> {
  MPI_Fint* f;
  MPI_Fint* given;
  std::vector<MPI_Fint> local;
  std::vector<MPI_Status> values;
  S* pointer = nullptr;
  explicit Arg(void* p) : f(static_cast<MPI_Fint*>(p)), given(f) {}
  void prepare(Shape& s) {
    const bool array = s.first_is_count && (s.traits.request == format::RequestEffect::complete_all ||
                                            s.traits.request == format::RequestEffect::complete_some);
    const std::size_t n = array ? static_cast<std::size_t>(std::max(s.count, 0)) : 1;
    values.assign(std::max<std::size_t>(n, 1), MPI_Status{});
    const Sentinels& z = sentinels();
    if (!f || static_cast<const void*>(f) == z.status_ignore || static_cast<const void*>(f) == z.statuses_ignore) {
      local.assign(values.size() * k_status_ints, 0);
      f = local.data();
    }
    if constexpr (std::is_const_v<S>) after();  // an input (Test_cancelled)
    pointer = values.data();
  }
  S*& c() { return pointer; }
  void* fort() { return f; }
  void after() {
    for (std::size_t i = 0; i < values.size(); ++i) PMPI_Status_f2c(f + i * k_status_ints, &values[i]);
  }
};

// A buffer: MPI_BOTTOM and MPI_IN_PLACE become the C constants.
template <class V>
struct Arg<V*, std::enable_if_t<std::is_void_v<V>>> {
  void* f;
  V* value;
  explicit Arg(void* p) : f(p), value(p) {
    const Sentinels& z = sentinels();
    if (p && p == z.bottom) value = MPI_BOTTOM;
    else if (p && p == z.in_place) value = MPI_IN_PLACE;
  }
  void prepare(Shape&) {}
  V*& c() { return value; }
  void* fort() { return f; }
  void after() {}
};

// INTEGER arrays and outputs, passed as they are (MPI_Fint is int), except
// the indices that Waitany/Testany and Waitsome/Testsome return: 1-based in
// Fortran, 0-based for the shape.
template <class I>
struct Arg<I*, std::enable_if_t<std::is_same_v<std::remove_const_t<I>, int>>> {
  I* f;
  I* pointer;
  std::vector<int> local;
  int* outcount = nullptr;  // Waitsome/Testsome: how many indices
  bool one_based = false;
  explicit Arg(void* p) : f(static_cast<I*>(p)), pointer(f) {}
  void prepare(Shape& s) {
    if constexpr (!std::is_const_v<I>) {
      const int k = s.int_outputs++;
      if (s.traits.request == format::RequestEffect::complete_any && k == 0) {
        one_based = true;
        local.assign(1, MPI_UNDEFINED);
      } else if (s.traits.request == format::RequestEffect::complete_some && k == 1) {
        one_based = true;
        local.assign(static_cast<std::size_t>(std::max(s.count, 1)), 0);
      }
      if (one_based) pointer = local.data();
    }
  }
  I*& c() { return pointer; }
  void* fort() { return const_cast<void*>(static_cast<const void*>(f)); }
  void after() {
    if constexpr (!std::is_const_v<I>) {
      if (!one_based || !f) return;
      const std::size_t n = outcount ? static_cast<std::size_t>(std::max(*outcount, 0)) : 1;
      for (std::size_t i = 0; i < n && i < local.size(); ++i)
        local[i] = f[i] == MPI_UNDEFINED ? MPI_UNDEFINED : f[i] - 1;
    }
  }
};

// Anything else (function pointers, Group_range_incl's ranges): as it is.
template <class C>
struct Arg<C, std::enable_if_t<std::is_pointer_v<C> && !k_handle<C> && !std::is_void_v<std::remove_pointer_t<C>> &&
                               !k_handle<std::remove_const_t<std::remove_pointer_t<C>>> &&
                               !std::is_same_v<std::remove_const_t<std::remove_pointer_t<C>>, MPI_Status> &&
                               !std::is_same_v<std::remove_const_t<std::remove_pointer_t<C>>, int>>> {
  void* f;
  C value;
  explicit Arg(void* p) : f(p), value(reinterpret_cast<C>(p)) {}
  void prepare(Shape&) {}
  C& c() { return value; }
  void* fort() { return f; }
  void after() {}
};

template <class Fn>
struct Signature;
template <class... C>
struct Signature<int (*)(C...)> {
  using Args = std::tuple<Arg<C>...>;
  static constexpr bool first_is_int = [] {
    if constexpr (sizeof...(C) == 0) return false;
    else return std::is_same_v<std::tuple_element_t<0, std::tuple<C...>>, int>;
  }();
};

// Waitsome/Testsome: the indices' count is the int output before them.
template <class... A>
void link_outcount(A&... args) {
  int* previous = nullptr;
  auto visit = [&](auto& a) {
    if constexpr (requires { a.one_based; a.outcount; } && std::is_same_v<decltype(a.f), int*>) {
      if (a.one_based && previous) a.outcount = previous;
      else previous = a.f;
    }
  };
  (visit(args), ...);
}

// Call scan(shape) where an argument has one.
template <class A>
void scan(A& a, Shape& s) {
  if constexpr (requires { a.scan(s); }) a.scan(s);
}

}  // namespace smtrace::tracer::fortran
