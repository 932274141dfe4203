// Inserts per second and memory of analyzer::AccessTree against PARCOACH's
// reference representation (one node per access in a std::multiset keyed on
// the low bound, inserting only: no overlap search, no merging), in the same
// run, on four streams:
//   adjacent    one sweep of 8-byte blocks (seed 000 Fig. 4b's Gets)
//   strided     16 bytes every 64 (seed 004 Fig. 4)
//   interlaced  16 bytes every 64, then the 16 bytes 32 further on each
//               period (seed 004 Fig. 5: buffer1's loop, then buffer2's)
//   arrays      4 arrays of 8-byte elements, one after the other, read
//               together: a[i], b[i], c[i], d[i] (equidistant blocks that are
//               not a loop's stride: access_tree.cpp open case h)
//   random      lo uniform in 64 MiB, 1-256 bytes, a random type
//   bench_access_tree [--accesses N] [--quick] [--stream NAME]
// N defaults to 10M per stream; --quick is 1M. Rates are per CPU second of
// this thread (the development machine is shared); wall seconds are printed too.
//   bench_access_tree --fuzz STREAMS [--first K]
// runs the byte-history oracle of tests/unit/access_tree_oracle.hpp on
// streams K .. K + STREAMS - 1 (the unit test runs the first 12,000, most cut
// short), prints the counts and exits 1 at the first mismatch.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/access_tree.hpp"
#include "tests/unit/access_tree_oracle.hpp"

namespace {

using smtrace::analyzer::AccessTree;
using smtrace::analyzer::AccessType;
using smtrace::analyzer::Strided;

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The bytes a container allocates, for the baseline's memory.
uint64_t g_allocated = 0;
template <class T>
struct CountingAllocator {
  using value_type = T;
  CountingAllocator() = default;
  template <class U>
  CountingAllocator(const CountingAllocator<U>&) {}
  T* allocate(std::size_t n) {
    g_allocated += n * sizeof(T);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) {
    g_allocated -= n * sizeof(T);
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const CountingAllocator<U>&) const { return true; }
};

struct Access {
  uint64_t lo, hi;
  AccessType type;
  uint32_t tag;
  bool operator<(const Access& other) const { return lo < other.lo; }
};

using smtrace::test::access_oracle::Rng;  // splitmix64

enum class Kind { adjacent, strided, interlaced, arrays, random };

// Access i of a stream of `n` of `kind`, as one block (no string compared
// per access: the generator runs inside the timed loops).
struct Generator {
  Kind kind;
  uint64_t n;
  Rng rng{42};
  void get(uint64_t i, Strided& where, AccessType& type) {
    const uint64_t base = 1ull << 32;
    type = AccessType::rma_read;
    switch (kind) {
      case Kind::adjacent:
        where = {base + i * 8, 8, 0, 1};
        type = AccessType::rma_write;
        return;
      case Kind::strided: where = {base + i * 64, 16, 0, 1}; return;
      case Kind::interlaced: {
        const uint64_t half = n / 2;
        where = i < half ? Strided{base + i * 64, 16, 0, 1} : Strided{base + (i - half) * 64 + 32, 16, 0, 1};
        return;
      }
      case Kind::arrays: {
        const uint64_t length = (n / 4 + 1) * 8;
        where = {base + (i % 4) * length + (i / 4) * 8, 8, 0, 1};
        type = AccessType::local_read;
        return;
      }
      case Kind::random: {
        const uint64_t r = rng.next();
        where = {base + (r & ((64ull << 20) - 1)), 1 + ((r >> 32) & 255), 0, 1};
        type = static_cast<AccessType>((r >> 40) & 3);
        return;
      }
    }
  }
};

// Return `bytes` as "352 B", "12.5 KiB" or "48.0 MiB".
std::string amount(uint64_t bytes) {
  char text[32];
  if (bytes < 1024)
    std::snprintf(text, sizeof text, "%lu B", static_cast<unsigned long>(bytes));
  else if (bytes < (1u << 20))
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  else
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

void run(const char* name, Kind kind, uint64_t n) {
  Generator gen{kind, n};
  AccessTree tree;
  std::vector<smtrace::analyzer::TreeConflict> conflicts;
  uint64_t reported = 0;
  double c0 = cpu_seconds(), w0 = wall_seconds();
  for (uint64_t i = 0; i < n; ++i) {
    Strided where;
    AccessType type;
    gen.get(i, where, type);
    conflicts.clear();
    tree.insert(where, type, static_cast<uint32_t>(i), &conflicts);
    reported += conflicts.size();
  }
  const double tree_cpu = cpu_seconds() - c0, tree_wall = wall_seconds() - w0;
  const std::size_t tree_memory = tree.memory_bytes();

  Generator base_gen{kind, n};
  g_allocated = 0;
  double base_cpu = 0, base_wall = 0;
  uint64_t base_nodes = 0, base_memory = 0;
  {
    std::multiset<Access, std::less<Access>, CountingAllocator<Access>> reference;
    c0 = cpu_seconds();
    w0 = wall_seconds();
    for (uint64_t i = 0; i < n; ++i) {
      Strided where;
      AccessType type;
      base_gen.get(i, where, type);
      reference.insert({where.lo, where.lo + where.size, type, static_cast<uint32_t>(i)});
    }
    base_cpu = cpu_seconds() - c0;
    base_wall = wall_seconds() - w0;
    base_nodes = reference.size();
    base_memory = g_allocated;
  }
  std::printf("| %s | %.2fM | %.2f | %zu | %zu | %zu | %s | %.2fM | %.2f | %lu | %.0f | %s | %.1fx | %.0fx |\n",
              name, static_cast<double>(n) / tree_cpu * 1e-6, tree_wall, tree.nodes(), tree.peak_nodes(),
              tree.bytes_per_node(), amount(tree_memory).c_str(), static_cast<double>(n) / base_cpu * 1e-6, base_wall,
              static_cast<unsigned long>(base_nodes), static_cast<double>(base_memory) / static_cast<double>(base_nodes),
              amount(base_memory).c_str(), base_cpu / tree_cpu,
              static_cast<double>(base_memory) / static_cast<double>(tree_memory));
  std::fflush(stdout);
  (void)reported;
}

// Run the oracle on streams [first, first + streams); return the exit status.
int fuzz(uint64_t first, uint64_t streams) {
  namespace oracle = smtrace::test::access_oracle;
  uint64_t accesses = 0, conflicts = 0, max_nodes = 0;
  const double c0 = cpu_seconds();
  for (uint64_t n = first; n < first + streams; ++n) {
    const oracle::Shape shape = oracle::shape_of(n);
    const oracle::Result r = oracle::run_stream(shape.mode, n, shape.arena, shape.length);
    accesses += r.accesses;
    conflicts += r.conflicts;
    max_nodes = std::max(max_nodes, r.max_nodes);
    if (!r.failure.empty()) {
      std::printf("FAIL stream %lu: %s\n", static_cast<unsigned long>(n), r.failure.c_str());
      return 1;
    }
    if ((n - first + 1) % 100000 == 0 || n + 1 == first + streams) {
      std::printf("streams %lu..%lu: %lu accesses, %lu conflicts checked, at most %lu fragments, %.0f CPU s: ok\n",
                  static_cast<unsigned long>(first), static_cast<unsigned long>(n),
                  static_cast<unsigned long>(accesses), static_cast<unsigned long>(conflicts),
                  static_cast<unsigned long>(max_nodes), cpu_seconds() - c0);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = 10000000, fuzz_streams = 0, first = 0;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      n = 1000000;
    } else if (std::strcmp(argv[i], "--accesses") == 0 && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--stream") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--fuzz") == 0 && i + 1 < argc) {
      fuzz_streams = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--first") == 0 && i + 1 < argc) {
      first = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: bench_access_tree [--accesses N] [--quick] [--stream adjacent|strided|interlaced|arrays|random]\n"
                   "       bench_access_tree --fuzz STREAMS [--first K]\n");
      return 2;
    }
  }
  if (fuzz_streams != 0) return fuzz(first, fuzz_streams);
  std::printf("%lu accesses per stream; rates per CPU second\n\n", static_cast<unsigned long>(n));
  std::printf("| stream | tree inserts/s | wall s | nodes | peak nodes | B/node | memory | multiset inserts/s | wall s "
              "| nodes | B/node | memory | speed ratio | memory ratio |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const std::pair<const char*, Kind> kinds[] = {{"adjacent", Kind::adjacent},
                                                {"strided", Kind::strided},
                                                {"interlaced", Kind::interlaced},
                                                {"arrays", Kind::arrays},
                                                {"random", Kind::random}};
  for (const auto& [name, kind] : kinds)
    if (only.empty() || only == name) run(name, kind, n);
}
