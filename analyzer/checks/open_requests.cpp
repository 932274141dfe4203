// OpenRequestBooks: the tables of open requests that the passes of
// several checks share, one per rank. (Out of line: each check's
// translation unit asks it once per rank, and its hot paths are inlined.)
#include "analyzer/checks/open_requests.hpp"

#include <algorithm>

namespace smtrace::analyzer::checks {

std::shared_ptr<OpenRequests> OpenRequestBooks::of(const RankData& data, const void* who) {
  const std::lock_guard<std::mutex> lock(m_mutex);
  Held& held = m_books[&data];
  std::shared_ptr<OpenRequests> book = held.book.lock();
  if (book && std::find(held.takers.begin(), held.takers.end(), who) == held.takers.end()) {
    held.takers.push_back(who);
    return book;
  }
  book = std::make_shared<OpenRequests>();
  held = Held{book, {who}};
  return book;
}

}  // namespace smtrace::analyzer::checks
