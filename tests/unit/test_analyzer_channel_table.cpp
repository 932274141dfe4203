// ChannelTable: the replay's table of point-to-point channels.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/channel_table.hpp"

TEST_SUITE_BEGIN("analyzer");

TEST_CASE("analyzer::ChannelTable::queues by all four parts of the key") {
  using smtrace::analyzer::ChannelKey;
  using smtrace::analyzer::ChannelTable;
  ChannelTable table;
  CHECK(table.find({0, 0, 0, 0}) == nullptr);
  // Keys that differ in one part each, and enough of them to grow the table.
  std::vector<ChannelKey> keys;
  for (uint32_t comm = 0; comm < 3; ++comm)
    for (uint32_t from = 0; from < 5; ++from)
      for (uint32_t to = 0; to < 5; ++to)
        for (int32_t tag : {-1, 0, 1, 1 << 20}) keys.push_back({comm, from, to, tag});
  for (uint32_t n = 0; n < keys.size(); ++n) {
    ChannelTable::Queue& q = table[keys[n]];
    CHECK(q.head == ChannelTable::k_empty);
    q.head = n;
    q.tail = n + 1;
  }
  CHECK(table.size() == keys.size());
  for (uint32_t n = 0; n < keys.size(); ++n) {
    ChannelTable::Queue* q = table.find(keys[n]);
    REQUIRE(q != nullptr);
    CHECK(q->head == n);
    CHECK(q->tail == n + 1);
    CHECK(&table[keys[n]] == q);  // no new channel
  }
  CHECK(table.size() == keys.size());
  CHECK(table.find({3, 0, 0, 0}) == nullptr);
  CHECK(table.find({0, 0, 0, 2}) == nullptr);
  std::size_t seen = 0;
  table.each([&](const ChannelKey& key, const ChannelTable::Queue& q) {
    CHECK(keys[q.head] == key);
    ++seen;
  });
  CHECK(seen == keys.size());
}

TEST_SUITE_END();
