#include "analyzer/wire.hpp"

#include "analyzer/record_coding.hpp"

namespace smtrace::analyzer {

void WireWriter::operator()(const format::Event& event) {
  // record_coding's Encoder writes into room (the string's size) and grows it
  // by doubling: kept in m_event, whose room lasts from one event to the next,
  // rather than in m_out, whose size is the bytes written.
  record_coding::Encoder encode(m_event, 0);
  record_coding::put_event(encode, event);
  m_out.append(m_event.data(), encode.size());
}

void WireReader::operator()(format::Event& event) {
  try {
    record_coding::Decoder decode(m_in);  // advances m_in past the event when it goes
    record_coding::get_event(decode, event);
  } catch (const std::runtime_error&) {
    throw std::runtime_error("analyzer wire: the bytes end inside a value");
  }
}

}  // namespace smtrace::analyzer
