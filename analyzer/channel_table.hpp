// The replay's table of point-to-point channels: (communicator, sender,
// receiver, tag) to the queue of sends posted on it that no receive took
// yet. A queue is its first and last send; the links between its sends are
// kept by the caller (one per send, see Replay::replay), so that the table
// holds a few words per channel however many sends it carries.
// A FlatMap (flat_map.hpp); the replay makes a channel once and keeps it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "analyzer/flat_map.hpp"

namespace smtrace::analyzer {

struct ChannelKey {
  uint32_t comm = 0;  // global communicator index
  uint32_t from = 0;  // world ranks
  uint32_t to = 0;
  int32_t tag = 0;
  bool operator==(const ChannelKey&) const = default;
};

struct ChannelKeyHash {
  std::size_t operator()(const ChannelKey& k) const {
    uint64_t h = (uint64_t{k.comm} << 32 | k.from) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{k.to} << 32 | static_cast<uint32_t>(k.tag)) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};

inline constexpr uint32_t k_no_send = std::numeric_limits<uint32_t>::max();
// The sends of one channel still to be received (indices into the
// sender's operations), k_no_send for none.
struct ChannelQueue {
  uint32_t head = k_no_send;
  uint32_t tail = k_no_send;
};

class ChannelTable : public FlatMap<ChannelKey, ChannelQueue, ChannelKeyHash, 64> {
 public:
  static constexpr uint32_t k_empty = k_no_send;
  using Queue = ChannelQueue;
};

}  // namespace smtrace::analyzer
