// An event with every field away from its default (for the tests of the
// wire encoder and of the reader's decoder).
#pragma once

#include <cstdint>

#include "trace_format/event.hpp"

inline smtrace::format::Event full_event() {
  namespace fmt_ns = smtrace::format;
  fmt_ns::Event e;
  e.seq = 7;
  e.call = fmt_ns::Call::Sendrecv;
  e.thread = 3;
  e.t_start = 1'000'500;
  e.duration = 12345;
  e.pending = false;
  e.site = 9;
  e.stack = {10, 11, 300000};
  e.repeat = 4;
  e.rc = -17;
  e.comm = 2;
  e.peer = -1;
  e.tag = 0;
  e.buf = 0x7ffd'0000'1000;
  e.count = -5;
  e.datatype = 64;
  e.recv_buf = 0x7ffd'0000'2000;
  e.recv_count = 6;
  e.recv_datatype = 7;
  e.counts = {1, -2, 300};
  e.displs = {0, 8, 16};
  e.datatypes = {7, 14};
  e.recv_counts = {4, 5};
  e.recv_displs = {-8, 1LL << 40};
  e.recv_datatypes = {65, 66};
  e.recv_peer = 0;
  e.recv_tag = -1;
  e.op = 3;
  e.in_place = true;
  e.request = 99;
  e.requests = {1, 0, 1ULL << 50};
  e.completed = {{0, 1, {2, 5, 10, false, 0}}, {2, 3, {}}};
  e.status = {1, 2, -3, true, 15};
  e.flag = false;
  e.new_comm = 5;
  e.color = -4;
  e.key = 8;
  e.group = 6;
  e.new_datatype = 70;
  e.window = 1;
  e.win_base = 0xdead'beef;
  e.win_size = 4096;
  e.disp_unit = -8;
  e.target_disp = 16;
  e.target_count = 2;
  e.target_datatype = 14;
  e.result_buf = 0x1234;
  e.result_count = 1;
  e.result_datatype = 13;
  e.compare_buf = 0x5678;
  e.lock_type = fmt_ns::LockType::shared;
  e.assert_flags = fmt_ns::assert_flag::nocheck | fmt_ns::assert_flag::noput;
  e.size = 77;
  e.stride = -24;
  // CUDA fields (no real call fills them all at once).
  e.stream = 1ULL << 40;
  e.cuda_event = 3;
  e.kernel = 12;
  e.args = {{0, 0x7f00'0000'0000, 0, fmt_ns::ArgAccess::unspecified},
            {3, 0x10, 1ULL << 33, fmt_ns::ArgAccess::read},
            {7, UINT64_MAX, 8, fmt_ns::ArgAccess::read_write}};
  e.memory = fmt_ns::MemoryKind::managed;
  e.recv_memory = fmt_ns::MemoryKind::pinned;
  e.copy_kind = fmt_ns::CopyKind::inferred;
  e.flags = 0xffff'ffff;
  return e;
}
