// smt::IdList, the op index list of the model's events and the match pairs:
// up to two indices in place, more on the heap, std::vector's behaviour.
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "smt_encoder/id_list.hpp"

namespace {

using smtrace::smt::IdList;

std::vector<uint32_t> to_vector(const IdList& list) { return {list.begin(), list.end()}; }

}  // namespace

TEST_CASE("smt id list: in place, then on the heap, as a vector") {
  IdList list;
  std::vector<uint32_t> expect;
  CHECK(list.empty());
  for (uint32_t i = 0; i < 40; ++i) {
    list.push_back(i * 7);
    expect.push_back(i * 7);
    REQUIRE(list.size() == expect.size());
    CHECK(list == expect);
    CHECK(list.front() == expect.front());
    CHECK(list.back() == expect.back());
  }
  list[3] = 99;
  expect[3] = 99;
  CHECK(to_vector(list) == expect);
  list.clear();
  CHECK(list.empty());
  list.push_back(5);
  CHECK(list == std::vector<uint32_t>{5});
}

TEST_CASE("smt id list: copies and moves, in place and on the heap") {
  for (uint32_t n : {0u, 1u, 2u, 3u, 17u}) {
    CAPTURE(n);
    IdList a;
    for (uint32_t i = 0; i < n; ++i) a.push_back(i + 1);
    const IdList copy = a;
    CHECK(copy == a);
    IdList assigned{9, 9, 9, 9};
    assigned = a;
    CHECK(assigned == a);
    IdList small{4};
    small = assigned;
    CHECK(small == a);
    IdList moved = std::move(assigned);
    CHECK(moved == a);
    CHECK(assigned.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    assigned.push_back(1);    // and usable
    CHECK(assigned == std::vector<uint32_t>{1});
    IdList target{1, 2, 3};
    target = std::move(moved);
    CHECK(target == a);
    a.push_back(100);
    CHECK_FALSE(copy == a);  // copies own their indices
  }
}

TEST_CASE("smt id list: erase_if, erase and resize") {
  IdList list{1, 2, 3, 4, 5, 6};
  CHECK(erase_if(list, [](uint32_t x) { return x % 2 == 0; }) == 3);
  CHECK(list == std::vector<uint32_t>{1, 3, 5});
  list.erase(list.begin(), list.begin() + 1);
  CHECK(list == std::vector<uint32_t>{3, 5});
  list.resize(1);
  CHECK(list == std::vector<uint32_t>{3});
  list.resize(4);
  CHECK(list == std::vector<uint32_t>{3, 0, 0, 0});
  IdList two{7, 8};
  CHECK(erase_if(two, [](uint32_t x) { return x == 7; }) == 1);
  CHECK(two == std::vector<uint32_t>{8});
}

TEST_CASE("smt small list: one pair of numbers in place, more on the heap") {
  struct Pair {
    uint32_t a = 0, b = 0;
  };
  using List = smtrace::smt::SmallList<Pair, 1>;
  static_assert(sizeof(List) == 16);
  List list;
  for (uint32_t i = 0; i < 9; ++i) {
    list.push_back({i, 2 * i});
    REQUIRE(list.size() == i + 1);
  }
  uint32_t i = 0;
  for (const Pair& p : list) {
    CHECK(p.a == i);
    CHECK(p.b == 2 * i);
    ++i;
  }
  List one;
  one.push_back({7, 8});
  const List copy = one;
  CHECK(copy[0].a == 7);
  CHECK(copy[0].b == 8);
  one = list;
  CHECK(one.size() == 9);
  CHECK(one.back().b == 16);
  one.clear();
  CHECK(one.empty());
}
