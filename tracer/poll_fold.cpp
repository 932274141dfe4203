#include "tracer/poll_fold.hpp"

#include <algorithm>

namespace smtrace::tracer {

namespace {
uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

// What a HotEvent lacks is at its default.
uint64_t stream_of(const format::Event& e) { return e.stream; }
uint64_t stream_of(const format::HotEvent&) { return 0; }
uint64_t cuda_event_of(const format::Event& e) { return e.cuda_event; }
uint64_t cuda_event_of(const format::HotEvent&) { return 0; }
}  // namespace

template <class E>
uint64_t poll_key(const E& e) {
  uint64_t h = mix(0, static_cast<uint64_t>(e.call));
  h = mix(h, e.site);
  h = mix(h, e.thread);
  h = mix(h, e.comm);
  h = mix(h, e.peer ? static_cast<uint64_t>(static_cast<uint32_t>(*e.peer)) : 0xFFFFFFFFFFull);
  h = mix(h, e.tag ? static_cast<uint64_t>(static_cast<uint32_t>(*e.tag)) : 0xFFFFFFFFFFull);
  h = mix(h, e.request);
  h = mix(h, stream_of(e));
  h = mix(h, cuda_event_of(e));
  for (uint64_t r : e.requests) h = mix(h, r);
  return mix(h, e.requests.size());
}
template uint64_t poll_key(const format::Event&);
template uint64_t poll_key(const format::HotEvent&);

template <class E>
bool PollFolder::fold(const E& poll, uint64_t key) {
  if (!m_active || key != m_key || poll.call != m_first.call || poll.thread != m_first.thread ||
      poll.site != m_first.site ||
      !std::equal(poll.requests.begin(), poll.requests.end(), m_first.requests.begin(), m_first.requests.end()) ||
      poll.request != m_first.request || stream_of(poll) != m_first.stream ||
      cuda_event_of(poll) != m_first.cuda_event)
    return false;
  if (m_folded == 0) m_second_start = poll.t_start;
  ++m_folded;
  m_last_end = poll.t_start + static_cast<int64_t>(poll.duration);
  return true;
}
template bool PollFolder::fold(const format::Event&, uint64_t);
template bool PollFolder::fold(const format::HotEvent&, uint64_t);

void PollFolder::start(const format::Event& poll, uint64_t key) {
  m_active = true;
  m_key = key;
  m_first = poll;
  m_folded = 0;
}

bool PollFolder::take_summary(format::Event& summary) {
  bool any = m_active && m_folded > 0;
  if (any) {
    summary = m_first;
    summary.seq = 0;
    summary.t_start = m_second_start;
    summary.duration = static_cast<uint64_t>(m_last_end - m_second_start);
    summary.repeat = m_folded;
    summary.stack.clear();
  }
  m_active = false;
  m_folded = 0;
  return any;
}

}  // namespace smtrace::tracer
