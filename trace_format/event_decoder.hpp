// Internal to trace_format: decodes an Event record of a rank file straight
// into the plain struct of event.hpp, with libprotobuf's CodedInputStream
// and without the generated message (whose parse, Clear and field-by-field
// copy into the plain struct cost more than the analysis of most events).
//
// Only the coding the writers produce is taken here: the fields of
// smtrace.proto's Event with their declared wire types (repeated scalars
// packed or not). Anything else (unknown fields, groups, other wire types,
// malformed bytes) makes decode_event return false, and the reader then
// parses the record with the generated message, which decides what it
// means. So a record decodes to the same plain event either way.
#pragma once

#include <cstdint>

#include "trace_format/event.hpp"

namespace smtrace::format::detail {

// What an Event record says about the stream coding, beside the event.
struct EventRecord {
  bool has_seq = false;    // seq was given (else it is the previous one's + 1)
  uint64_t completes = 0;  // non-zero: a completion record
};

// Decode the Event record `data[0, size)` (`data[0, readable)` may be read:
// the record's frame) into `out`, every field
// overwritten (vectors keep their capacity), and `record`. seq, t_start and
// buf are left as the record gives them (in a rank file's stream t_start
// is a delta, buf a delta or the address by the file's version and the
// call: reader.cpp's RankWalker::buf_of). Return false for a record outside the coding described
// above; `out` is then unspecified.
bool decode_event(const unsigned char* data, int size, int readable, Event& out, EventRecord& record);

}  // namespace smtrace::format::detail
