// Internal to trace_format: conversions between the generated messages of
// smtrace.proto and the plain structs of event.hpp. Events convert in
// absolute coding (seq, t_start and buf as values, not deltas).
#pragma once

#include "trace_format/event.hpp"
#include "trace_format/smtrace.pb.h"

namespace smtrace::format::detail {

// Return the plain event of `p`, taking seq, t_start and buf as they stand.
Event to_plain(const v1::Event& p);
// Decode `p` into `out`, every field overwritten, vectors keeping their capacity.
void to_plain(const v1::Event& p, Event& out);
CallSite to_plain(const v1::CallSite& p);
Module to_plain(const v1::Module& p);
CommDef to_plain(const v1::CommDef& p);
DatatypeDef to_plain(const v1::DatatypeDef& p);
Termination to_plain(const v1::Termination& p);
TracerNote to_plain(const v1::TracerNote& p);
RankHeader to_plain(const v1::RankHeader& p);
Manifest to_plain(const v1::Manifest& p);

// Fill `p` from `e` in absolute coding (seq always set).
void to_proto(const Event& e, v1::Event* p);
void to_proto(const CallSite& s, v1::CallSite* p);
void to_proto(const Module& m, v1::Module* p);
void to_proto(const CommDef& c, v1::CommDef* p);
void to_proto(const DatatypeDef& t, v1::DatatypeDef* p);
void to_proto(const Termination& t, v1::Termination* p);
void to_proto(const TracerNote& n, v1::TracerNote* p);
void to_proto(const RankHeader& h, v1::RankHeader* p);
void to_proto(const Manifest& m, v1::Manifest* p);

}  // namespace smtrace::format::detail
