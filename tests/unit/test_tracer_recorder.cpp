// Recorder::complete_last: a blocking call's entry record finished in place
// must be byte for byte the record the encoder writes for the complete event,
// and libprotobuf must read it as that event. Recorder::hot_event likewise
// against Recorder::event.
#include <doctest/doctest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "trace_format/call_semantics.hpp"
#include "trace_format/reader.hpp"
#include "trace_format/smtrace.pb.h"
#include "trace_format/wire.hpp"
#include "tracer/handlers.hpp"
#include "tracer/recorder.hpp"

namespace fs = std::filesystem;
namespace fmt_ns = smtrace::format;
using smtrace::tracer::Recorder;

namespace {

struct Output {
  uint64_t duration = 0;
  int32_t rc = 0;
  fmt_ns::Status status;
};

// Return `e` as the reader gives it back: event `seq`, complete with `out`.
fmt_ns::Event complete(fmt_ns::Event e, uint64_t seq, const Output& out) {
  e.seq = seq;
  e.duration = out.duration;
  e.rc = out.rc;
  e.status = out.status;
  return e;
}

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("smtrace-recorder-" + name + "-" + std::to_string(getpid()) + ".smt");
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fmt_ns::RankHeader header() {
  fmt_ns::RankHeader h;
  h.rank = 0;
  h.world_size = 2;
  return h;
}

// Write each event as an entry (pending) finished by complete_last, or
// directly complete; return the file's bytes.
std::string write(const std::vector<fmt_ns::Event>& events, const std::vector<Output>& outputs, bool in_place) {
  const fs::path file = temp_file(in_place ? "in-place" : "direct");
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 64 * 1024));
  r.lock();
  for (std::size_t i = 0; i < events.size(); ++i) {
    fmt_ns::Event e = events[i];
    if (in_place) {
      e.pending = true;
      const uint64_t seq = r.event(e);
      CHECK(r.complete_last(seq, outputs[i].duration, outputs[i].rc, outputs[i].status));
    } else {
      e.duration = outputs[i].duration;
      e.rc = outputs[i].rc;
      e.status = outputs[i].status;
      r.event(e);
    }
  }
  r.close();
  r.unlock();
  std::string bytes = slurp(file);
  fs::remove(file);
  return bytes;
}

std::vector<fmt_ns::Event> calls() {
  std::vector<fmt_ns::Event> events;
  fmt_ns::Event send;
  send.call = fmt_ns::Call::Send;
  send.t_start = 1000;
  send.site = 3;
  send.comm = 0;
  send.peer = 1;
  send.tag = 0;
  send.buf = 0x7fff0000;
  send.datatype = 4;
  events.push_back(send);
  fmt_ns::Event recv = send;
  recv.call = fmt_ns::Call::Recv;
  recv.t_start = 1300;
  recv.peer = fmt_ns::k_any_source;
  recv.tag = fmt_ns::k_any_tag;
  recv.count = 8;
  recv.site = 4;
  events.push_back(recv);
  fmt_ns::Event flush;  // no buf: the field after pending is not buf
  flush.call = fmt_ns::Call::Win_flush;
  flush.t_start = 900;  // earlier: a negative time delta
  flush.thread = 2;
  flush.window = 3;
  flush.peer = 1;
  flush.stack = {5, 6, 7};
  events.push_back(flush);
  fmt_ns::Event big = recv;  // fields past status (35+) after the outputs
  big.t_start = 1'000'000'000'000;
  big.buf = 0x10;
  big.target_disp = 12;
  big.assert_flags = 4;
  big.flags = 1;
  big.message = 9;
  events.push_back(big);
  return events;
}

std::vector<Output> outputs() {
  std::vector<Output> out(4);
  out[0].duration = 250;
  out[1].duration = 1;
  out[1].status.source = 1;
  out[1].status.tag = 17;
  out[1].status.count = 8;
  out[2].duration = 0;
  out[2].rc = -3;
  out[3].duration = uint64_t{1} << 40;
  out[3].rc = 15;
  out[3].status.count = -1;
  out[3].status.cancelled = true;
  out[3].status.error = -2;
  return out;
}


// The calls of calls() that fit a HotEvent (all but the stack and the
// fields past status), as HotEvents.
std::vector<fmt_ns::HotEvent> hot_calls() {
  std::vector<fmt_ns::HotEvent> out;
  for (const fmt_ns::Event& e : calls()) {
    fmt_ns::HotEvent h;
    h.call = e.call;
    h.thread = e.thread;
    h.t_start = e.t_start;
    h.site = e.site;
    h.comm = e.comm;
    h.peer = e.peer;
    h.tag = e.tag;
    h.buf = e.buf;
    h.count = e.count;
    h.datatype = e.datatype;
    h.window = e.window;
    h.target_disp = e.target_disp;
    out.push_back(h);
  }
  out[2].target_count = 4;  // the flush as a Put
  out[2].target_datatype = 7;
  out[2].call = fmt_ns::Call::Put;
  out[3].request = 77;
  out[3].call = fmt_ns::Call::Irecv;
  return out;
}

// Write `rounds` times the hot calls, each blocking one as an entry and its
// complete event, as HotScope writes them (hot_event, then complete_last
// through the entry's marks or rewrite_last of the HotEvent) or as CallScope does (event, complete_last or rewrite_last of
// the Event the HotEvent stands for), into chunks of `chunk_bytes`; return
// the file's bytes.
std::string write_hot(bool hot, int rounds, uint32_t chunk_bytes, const fs::path& file) {
  const auto events = hot_calls();
  const auto outs = outputs();
  Recorder r;
  REQUIRE(r.open(file.string(), header(), chunk_bytes));
  r.lock();
  for (int k = 0; k < rounds; ++k) {
    for (std::size_t i = 0; i < events.size(); ++i) {
      fmt_ns::HotEvent h = events[i];
      h.t_start += 1000 * k;
      const bool blocking = i != 2;
      const uint64_t request = h.request;
      h.request = 0;  // an output
      h.pending = blocking;
      if (!blocking) {
        h.duration = outs[i].duration;
        h.rc = outs[i].rc;
        h.status = outs[i].status;
      }
      fmt_ns::Event e = h.to_event();
      const uint64_t seq = hot ? r.hot_event(h) : r.event(e);
      if (!blocking) continue;
      if (hot) {  // as HotScope::leave: the entry's marks, else a second encoding
        if (request == 0 && r.complete_last(seq, outs[i].duration, outs[i].rc, outs[i].status)) continue;
        h.pending = false;
        h.duration = outs[i].duration;
        h.rc = outs[i].rc;
        h.status = outs[i].status;
        h.request = request;
        REQUIRE(r.rewrite_last(seq, h));
        continue;
      }
      // As CallScope::leave (complete_last declines a record that would no
      // longer fit the chunk).
      if (request == 0 && r.complete_last(seq, outs[i].duration, outs[i].rc, outs[i].status)) continue;
      e.pending = false;
      e.duration = outs[i].duration;
      e.rc = outs[i].rc;
      e.status = outs[i].status;
      e.request = request;
      REQUIRE(r.rewrite_last(seq, e));
    }
  }
  r.close();
  r.unlock();
  return slurp(file);
}

// Request completions as HotEvents, with their outputs: a Wait that
// completes a receive, a Wait on a null request, a Waitall of as many
// requests as a HotEvent holds with the statuses ignored, a failing Test, a
// successful Testall.
struct Completion {
  fmt_ns::HotEvent in;
  std::vector<fmt_ns::CompletedRequest> done;
  std::optional<bool> flag;
  int32_t rc = 0;
  uint64_t duration = 0;
};

std::vector<Completion> completion_calls() {
  auto call = [](fmt_ns::Call c, int64_t t_start, uint32_t site) {
    Completion x;
    x.in.call = c;
    x.in.t_start = t_start;
    x.in.site = site;
    return x;
  };
  std::vector<Completion> out;
  Completion wait = call(fmt_ns::Call::Wait, 2000, 5);
  wait.in.requests.push_back(uint64_t{1} << 33);
  wait.done.push_back({0, uint64_t{1} << 33, {1, 2, 3, false, 0}});
  wait.duration = 300;
  out.push_back(wait);
  Completion null_wait = call(fmt_ns::Call::Wait, 1900, 5);
  null_wait.in.requests.push_back(0);
  null_wait.rc = 7;
  out.push_back(null_wait);
  Completion waitall = call(fmt_ns::Call::Waitall, 2100, 6);
  waitall.in.thread = 1;
  for (uint32_t i = 0; i < fmt_ns::HotEvent::k_max_requests; ++i) {
    waitall.in.requests.push_back(100 + i);
    waitall.done.push_back({i, 100 + i, {}});
  }
  waitall.duration = 12345;
  out.push_back(waitall);
  Completion test = call(fmt_ns::Call::Test, 2200, 7);
  test.in.requests.push_back(9);
  test.flag = false;
  out.push_back(test);
  Completion testall = call(fmt_ns::Call::Testall, 2300, 8);
  for (uint64_t r : {11, 0, 12}) testall.in.requests.push_back(r);
  testall.done.push_back({0, 11, {}});
  testall.done.push_back({2, 12, {4, 5, 6, false, 0}});
  testall.flag = true;
  out.push_back(testall);
  // Waitany, Testany, Waitsome and Testsome (on the hot path too).
  Completion waitany = call(fmt_ns::Call::Waitany, 2400, 9);
  for (uint64_t r : {21, 22, 0}) waitany.in.requests.push_back(r);
  waitany.done.push_back({1, 22, {0, 3, 16, false, 0}});
  waitany.duration = 450;
  out.push_back(waitany);
  Completion waitany_null = call(fmt_ns::Call::Waitany, 2500, 9);  // every request null: index MPI_UNDEFINED
  for (int k = 0; k < 2; ++k) waitany_null.in.requests.push_back(0);
  out.push_back(waitany_null);
  Completion testany = call(fmt_ns::Call::Testany, 2600, 10);
  for (uint64_t r : {23, 24}) testany.in.requests.push_back(r);
  testany.flag = false;
  out.push_back(testany);
  Completion waitsome = call(fmt_ns::Call::Waitsome, 2700, 11);
  for (uint64_t r : {31, 32, 33, 34}) waitsome.in.requests.push_back(r);
  waitsome.done.push_back({3, 34, {}});
  waitsome.done.push_back({0, 31, {2, 1, 5, false, 0}});
  waitsome.duration = 77;
  out.push_back(waitsome);
  Completion testsome = call(fmt_ns::Call::Testsome, 2800, 12);
  for (uint64_t r : {35, 36}) testsome.in.requests.push_back(r);
  testsome.done.push_back({1, 36, {}});
  testsome.flag = true;
  out.push_back(testsome);
  return out;
}

// The complete Event of `c` at `seq`.
fmt_ns::Event completed_event(const Completion& c, uint64_t seq) {
  fmt_ns::Event e = c.in.to_event();
  e.seq = seq;
  e.completed = c.done;
  e.flag = c.flag;
  e.rc = c.rc;
  e.duration = c.duration;
  return e;
}

// write_hot for completion_calls(): a blocking call's outputs (its
// completed requests) set on the HotEvent after its entry, as HotScope does,
// or merged into the Event, as CallScope does (complete_last where it has
// none); the polls written complete.
std::string write_completions(bool hot, int rounds, uint32_t chunk_bytes, const fs::path& file, int& appended) {
  const auto calls = completion_calls();
  Recorder r;
  REQUIRE(r.open(file.string(), header(), chunk_bytes));
  r.lock();
  for (int k = 0; k < rounds; ++k) {
    for (const Completion& c : calls) {
      fmt_ns::HotEvent h = c.in;
      h.t_start += 1000 * k;
      const bool blocking = fmt_ns::call_traits(h.call).blocks;
      auto finish = [&](auto& e) {
        e.pending = false;
        e.duration = c.duration;
        e.rc = c.rc;
        e.flag = c.flag;
        for (const fmt_ns::CompletedRequest& d : c.done) e.completed.push_back(d);
      };
      if (!blocking) {
        finish(h);
        if (hot) r.hot_event(h);
        else {
          fmt_ns::Event e = h.to_event();
          r.event(e);
        }
        continue;
      }
      h.pending = true;
      fmt_ns::Event e = h.to_event();
      const uint64_t seq = hot ? r.hot_event(h) : r.event(e);
      if (hot) {  // as HotScope::leave
        if (c.done.empty() && !c.flag && r.complete_last(seq, c.duration, c.rc, {})) continue;
        // Completed requests and a flag appended to an entry ending with its requests.
        const bool appendable = h.window == 0 && h.target_disp == 0 && h.target_count == 0 && h.target_datatype == 0;
        if ((!c.done.empty() || c.flag) && appendable &&
            r.complete_last(seq, c.done.data(), c.done.size(), c.flag, c.duration, c.rc, {})) {
          ++appended;
          continue;
        }
        finish(h);
        REQUIRE(r.rewrite_last(seq, h));
        continue;
      }
      if (c.done.empty() && r.complete_last(seq, c.duration, c.rc, {})) continue;
      finish(e);
      REQUIRE(r.rewrite_last(seq, e));
    }
  }
  r.close();
  r.unlock();
  return slurp(file);
}

// Write `rounds` rounds with `write` (write_hot or write_completions) the hot
// way and the general way, in one chunk and in chunks of 200 bytes (a
// rollover every few records: the hot coding restarts its deltas with the
// chunk as the general one does): the files must be equal byte for byte and
// read back without problems. Return the events read, per chunk size.
template <class Write>
std::vector<std::vector<fmt_ns::Event>> hot_and_general_agree(const std::string& name, int rounds, Write&& write) {
  std::vector<std::vector<fmt_ns::Event>> out;
  for (const uint32_t chunk_bytes : {64u * 1024, 200u}) {
    const fs::path hot_file = temp_file(name), general_file = temp_file(name + "-general");
    const std::string hot = write(true, rounds, chunk_bytes, hot_file);
    const std::string general = write(false, rounds, chunk_bytes, general_file);
    CHECK(hot == general);
    auto trace = fmt_ns::read_rank_file(hot_file);
    for (const auto& p : trace.problems) MESSAGE(p.to_string());
    CHECK(trace.problems.empty());
    out.push_back(std::move(trace.events));
    fs::remove(hot_file);
    fs::remove(general_file);
  }
  return out;
}

// Parse the one chunk of rank file `bytes` (magic, header frame, one chunk
// frame) with libprotobuf.
smtrace::v1::Chunk only_chunk(const std::string& bytes) {
  auto frame_len = [&](std::size_t off) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[off + k])) << (8 * k);
    return v;
  };
  std::size_t at = fmt_ns::k_magic_size;
  at += fmt_ns::k_frame_header_size + frame_len(at);
  const uint32_t chunk_len = frame_len(at);
  REQUIRE(at + fmt_ns::k_frame_header_size + chunk_len == bytes.size());
  smtrace::v1::Chunk chunk;
  REQUIRE(chunk.ParseFromString(bytes.substr(at + fmt_ns::k_frame_header_size, chunk_len)));
  return chunk;
}
}  // namespace

TEST_SUITE_BEGIN("tracer");

TEST_CASE("tracer::Recorder::complete_last writes the encoder's bytes") {
  const auto events = calls();
  const auto outs = outputs();
  for (std::size_t n = 1; n <= events.size(); ++n) {
    // Every prefix and every event alone, so each case is also first in its chunk.
    std::vector<fmt_ns::Event> prefix(events.begin(), events.begin() + static_cast<long>(n));
    std::vector<Output> prefix_outs(outs.begin(), outs.begin() + static_cast<long>(n));
    CHECK(write(prefix, prefix_outs, true) == write(prefix, prefix_outs, false));
    CHECK(write({events[n - 1]}, {outs[n - 1]}, true) == write({events[n - 1]}, {outs[n - 1]}, false));
  }
}

TEST_CASE("tracer::Recorder::complete_last of an entry with no outputs at all") {
  // Duration 0, rc 0, default status: the complete event is the entry
  // without its pending field, two bytes shorter; they go back to zero.
  for (const fmt_ns::Event& e : calls()) {
    CHECK(write({e}, {Output{}}, true) == write({e}, {Output{}}, false));
    CHECK(write({e, e}, {Output{}, Output{5, 0, {}}}, true) == write({e, e}, {Output{}, Output{5, 0, {}}}, false));
  }
}

TEST_CASE("tracer::Recorder::complete_last reads back through libprotobuf and the reader") {
  const fs::path file = temp_file("read");
  const auto events = calls();
  const auto outs = outputs();
  {
    Recorder r;
    REQUIRE(r.open(file.string(), header(), 64 * 1024));
    r.lock();
    for (std::size_t i = 0; i < events.size(); ++i) {
      fmt_ns::Event e = events[i];
      e.pending = true;
      const uint64_t seq = r.event(e);
      REQUIRE(r.complete_last(seq, outs[i].duration, outs[i].rc, outs[i].status));
    }
    r.close();
    r.unlock();
  }
  const std::string bytes = slurp(file);
  const smtrace::v1::Chunk chunk = only_chunk(bytes);
  REQUIRE(chunk.event_size() == 4);
  for (int i = 0; i < 4; ++i) {
    const auto& p = chunk.event(i);
    CHECK_FALSE(p.pending());
    CHECK(p.duration() == outs[static_cast<std::size_t>(i)].duration);
    CHECK(p.rc() == outs[static_cast<std::size_t>(i)].rc);
  }
  CHECK(chunk.event(1).status().source() == 1);
  CHECK(chunk.event(1).status().tag() == 17);
  CHECK(chunk.event(3).status().count() == -1);
  CHECK(chunk.event(3).status().cancelled());
  CHECK(chunk.event(3).status().error() == -2);

  auto trace = fmt_ns::read_rank_file(file);
  for (const auto& p : trace.problems) MESSAGE(p.to_string());
  REQUIRE(trace.events.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(trace.events[i] == complete(events[i], i, outs[i]));
  }
  fs::remove(file);
}

TEST_CASE("tracer::Recorder::complete_last declines what it cannot finish in place") {
  const fs::path file = temp_file("decline");
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 64 * 1024));
  r.lock();
  fmt_ns::Event e = calls()[1];
  e.pending = true;
  e.status.source = 1;  // an output field already in the entry
  uint64_t seq = r.event(e);
  const uint64_t bytes = r.bytes();
  CHECK_FALSE(r.complete_last(seq, 10, 0, {}));
  CHECK(r.bytes() == bytes);
  fmt_ns::Event done = calls()[0];  // complete: no pending field to replace
  seq = r.event(done);
  CHECK_FALSE(r.complete_last(seq, 10, 0, {}));
  e = calls()[0];
  e.pending = true;
  seq = r.event(e);
  r.note(fmt_ns::TracerNote{5, "in between"});  // no longer the last record
  CHECK_FALSE(r.complete_last(seq, 10, 0, {}));
  fmt_ns::Event large = calls()[0];  // a body of 0x80 bytes or more: a two-byte length
  large.pending = true;
  large.stack.assign(40, 100000);
  seq = r.event(large);
  CHECK_FALSE(r.complete_last(seq, 10, 0, {}));
  r.close();
  r.unlock();
  fs::remove(file);
}

TEST_CASE("tracer::Recorder::complete_last gives a body that outgrows the one-byte length a two-byte one") {
  // An entry with a one-byte length whose complete event needs two: with
  // completed requests (here none), moved one byte on, as the encoder
  // writes it (the same file as event() of the complete event); where the
  // complete event does not fit the chunk, the entry is left as it was.
  fmt_ns::Event near = calls()[0];
  near.pending = true;
  near.stack.assign(36, 100000);  // 3 bytes each
  const fmt_ns::Status status{1, 17, 8, true, -2};
  fmt_ns::Event done = near;
  done.pending = false;
  done.duration = uint64_t{1} << 40;
  done.rc = 15;
  done.status = status;
  std::string bytes[2];
  for (int direct = 0; direct < 2; ++direct) {
    const fs::path file = temp_file(direct ? "two-byte-direct" : "two-byte");
    Recorder r;
    REQUIRE(r.open(file.string(), header(), 64 * 1024));
    r.lock();
    fmt_ns::Event first = calls()[0];  // opens the chunk
    r.event(first);
    const uint64_t before = r.bytes();
    if (direct) {
      r.event(done);
    } else {
      const uint64_t seq = r.event(near);
      const uint64_t entry_size = r.bytes() - before;
      REQUIRE(entry_size < 2 + 0x80);
      REQUIRE(entry_size + 20 >= 2 + 0x80);  // the outputs take about 30 bytes
      // The blocking calls' complete_last declines it (they rarely need
      // it; the entry is left as it was), the completions' one moves it.
      CHECK_FALSE(r.complete_last(seq, done.duration, done.rc, status));
      CHECK(r.bytes() == before + entry_size);
      CHECK(r.complete_last(seq, nullptr, 0, std::nullopt, done.duration, done.rc, status));
    }
    r.close();
    r.unlock();
    bytes[direct] = slurp(file);
    fs::remove(file);
  }
  CHECK(bytes[0] == bytes[1]);
  // Chunks of 64 bytes: the entry is written (a chunk's first record always
  // is), its complete event would outgrow the chunk.
  const fs::path file = temp_file("two-byte-full");
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 64));
  r.lock();
  const uint64_t seq = r.event(near);
  const uint64_t entry_end = r.bytes();
  CHECK_FALSE(r.complete_last(seq, nullptr, 0, std::nullopt, done.duration, done.rc, status));
  CHECK(r.bytes() == entry_end);
  CHECK(r.rewrite_last(seq, done));  // the complete event in its place, as CallScope::leave goes on
  r.close();
  r.unlock();
  auto trace = fmt_ns::read_rank_file(file);
  CHECK(trace.problems.empty());
  REQUIRE(trace.events.size() == 1);
  CHECK_FALSE(trace.events[0].pending);
  CHECK(trace.events[0].duration == done.duration);
  fs::remove(file);
}

TEST_CASE("tracer::Recorder::hot_event writes event's bytes") {
  const auto events = hot_calls();
  const auto outs = outputs();
  for (const auto& read : hot_and_general_agree("hot", 30, write_hot)) {
    REQUIRE(read.size() == 30 * events.size());
    for (std::size_t i = 0; i < events.size(); ++i) CHECK(read[i] == complete(events[i].to_event(), i, outs[i]));
  }
}

TEST_CASE("tracer::Recorder::complete_last of a hot entry writes what the walk over it writes") {
  // Every hot call as an entry (its request, an output, left out) with
  // every set of outputs, twice in a row so that the second is coded against
  // the first: through the marks hot_event took (no walk) and through the
  // walk over the entry event() wrote, the same bytes.
  const auto events = hot_calls();
  const auto outs = outputs();
  for (std::size_t i = 0; i < events.size(); ++i) {
    for (std::size_t k = 0; k < outs.size(); ++k) {
      std::string bytes[2];
      for (const bool hot : {true, false}) {
        const fs::path file = temp_file(hot ? "marks" : "marks-walk");
        Recorder r;
        REQUIRE(r.open(file.string(), header(), 64 * 1024));
        r.lock();
        for (int round = 0; round < 2; ++round) {
          fmt_ns::HotEvent h = events[i];
          h.request = 0;
          h.pending = true;
          h.t_start += 500 * round;
          fmt_ns::Event e = h.to_event();
          const uint64_t seq = hot ? r.hot_event(h) : r.event(e);
          REQUIRE(r.complete_last(seq, outs[k].duration, outs[k].rc, outs[k].status));
        }
        r.close();
        r.unlock();
        bytes[hot ? 0 : 1] = slurp(file);
        fs::remove(file);
      }
      CAPTURE(i);
      CAPTURE(k);
      CHECK(bytes[0] == bytes[1]);
    }
  }
}

TEST_CASE("tracer::Recorder::complete_last does not take a hot entry's marks for a later record") {
  const fs::path file = temp_file("stale-marks");
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 64 * 1024));
  r.lock();
  fmt_ns::HotEvent h = hot_calls()[0];
  h.pending = true;
  uint64_t seq = r.hot_event(h);
  r.note(fmt_ns::TracerNote{5, "in between"});  // no longer the last record
  CHECK_FALSE(r.complete_last(seq, 10, 0, {}));
  h.pending = false;  // complete: no pending field, no marks
  seq = r.hot_event(h);
  CHECK_FALSE(r.complete_last(seq, 10, 0, {}));
  h.pending = true;
  seq = r.hot_event(h);
  REQUIRE(r.complete_last(seq, 10, 0, {}));
  CHECK_FALSE(r.complete_last(seq, 20, 0, {}));  // complete now: its marks went with its pending field
  r.close();
  r.unlock();
  auto trace = fmt_ns::read_rank_file(file);
  for (const auto& p : trace.problems) MESSAGE(p.to_string());
  CHECK(trace.problems.empty());
  REQUIRE(trace.events.size() == 3);
  CHECK(trace.events[0].pending);
  CHECK_FALSE(trace.events[2].pending);
  CHECK(trace.events[2].duration == 10);
  fs::remove(file);
}

TEST_CASE("tracer::Recorder keeps every record across segments (the zero fill never covers one)") {
  // Over 9 MiB of events with a note between some of them, so that chunks
  // and records straddle the 4 MiB segments, each of which is filled with
  // zeros through pwrite before it is mapped: every event reads back, both
  // as a killed rank leaves the file (open chunk, recorder still open) and
  // after close.
  const fs::path file = temp_file("segments");
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 60 * 1000));
  r.lock();
  uint64_t n = 0, not_completed = 0;
  while (r.bytes() < (9u << 20)) {
    fmt_ns::HotEvent h = hot_calls()[0];
    h.t_start = static_cast<int64_t>(10 * n);
    h.tag = static_cast<int32_t>(n);
    h.pending = n % 3 == 0;
    const uint64_t seq = r.hot_event(h);
    if (h.pending) not_completed += !r.complete_last(seq, 7, 0, {});
    if (n % 1000 == 999) r.note(fmt_ns::TracerNote{h.t_start, "a note between events"});
    ++n;
  }
  REQUIRE(not_completed == 0);
  auto check = [&](const fmt_ns::RankTrace& trace) {
    REQUIRE(trace.events.size() == n);
    uint64_t wrong = 0;  // one check for the lot: there are about a million
    for (uint64_t i = 0; i < n; ++i)
      wrong += trace.events[i].tag != static_cast<int32_t>(i) || trace.events[i].pending;
    CHECK(wrong == 0);
  };
  check(fmt_ns::read_rank_file(file));  // as a kill leaves it
  r.close();
  r.unlock();
  auto closed = fmt_ns::read_rank_file(file);
  for (const auto& p : closed.problems) MESSAGE(p.to_string());
  CHECK(closed.problems.empty());
  check(closed);
  fs::remove(file);
}

namespace {
// Return whether this process may run on 2 CPUs or more (start_grow_ahead's condition).
bool two_cpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2;
}

// Write `n` hot events (a third of them entries finished by complete_last,
// a note every 1000) into `file`, with the grow-ahead thread or without;
// check the file as a killed rank leaves it reads back, close; return the
// closed file's bytes.
std::string write_segments(const fs::path& file, uint64_t n, bool ahead) {
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 60 * 1000));
  r.lock();
  if (ahead) {
    smtrace::tracer::handlers::Untraced quiet;  // not a thread of the program's (threads.cpp)
    CHECK(r.start_grow_ahead() == two_cpus());
    CHECK(r.grow_ahead() == two_cpus());
  }
  for (uint64_t i = 0; i < n; ++i) {
    fmt_ns::HotEvent h = hot_calls()[0];
    h.t_start = static_cast<int64_t>(10 * i);
    h.tag = static_cast<int32_t>(i);
    h.pending = i % 3 == 0;
    const uint64_t seq = r.hot_event(h);
    if (h.pending) REQUIRE(r.complete_last(seq, 7, 0, {}));
    if (i % 1000 == 999) r.note(fmt_ns::TracerNote{h.t_start, "a note between events"});
  }
  const fmt_ns::RankTrace killed = fmt_ns::read_rank_file(file);  // as a kill leaves it
  REQUIRE(killed.events.size() == n);
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < n; ++i) wrong += killed.events[i].tag != static_cast<int32_t>(i) || killed.events[i].pending;
  CHECK(wrong == 0);
  r.close();
  CHECK_FALSE(r.grow_ahead());  // joined before the file was cut
  r.unlock();
  return slurp(file);
}
}  // namespace

TEST_CASE("tracer::Recorder with the grow-ahead thread writes the same file") {
  // About 18 MiB of records over 5 segments: with the thread zero-filling
  // each next segment ahead of the writer, every record reads back (as a
  // kill leaves the file too) and the closed file is byte for byte the one
  // written without it: its zeros never cover a record, and it is done
  // before close cuts the file. Three runs, for the race between the
  // writer reaching a segment and the thread's write of it.
  const fs::path file = temp_file("ahead");
  const uint64_t n = 1000000;
  const std::string plain = write_segments(file, n, false);
  CHECK(plain.size() > (16u << 20));
  for (int run = 0; run < 3; ++run) CHECK(write_segments(file, n, true) == plain);
  const auto trace = fmt_ns::read_rank_file(file);
  for (const auto& p : trace.problems) MESSAGE(p.to_string());
  CHECK(trace.problems.empty());
  fs::remove(file);
}

TEST_CASE("tracer::Recorder's grow-ahead thread is not a forked child's") {
  // A child forked while the thread runs has no such thread: it grows its
  // file itself (never waiting for the parent's thread) and close() does
  // not join it; the parent's goes on. (A child's records go to the same
  // mapping as its parent's: here to a file of its own, opened after fork.)
  if (!two_cpus()) {
    Recorder r;
    const fs::path file = temp_file("fork-one-cpu");
    REQUIRE(r.open(file.string(), header(), 60 * 1000));
    CHECK_FALSE(r.start_grow_ahead());  // one CPU: nothing started
    r.close();
    fs::remove(file);
    return;
  }
  const fs::path file = temp_file("fork-parent");
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 60 * 1000));
  r.lock();
  {
    smtrace::tracer::handlers::Untraced quiet;
    REQUIRE(r.start_grow_ahead());
  }
  fmt_ns::HotEvent h = hot_calls()[0];
  for (int i = 0; i < 200000; ++i) r.hot_event(h);  // into the second segment, the third being written
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // In the child: not its thread; growing and closing go on without it.
    bool ok = !r.grow_ahead();
    Recorder own;
    const fs::path mine = temp_file("fork-child");
    ok = ok && own.open(mine.string(), header(), 60 * 1000);
    own.lock();
    for (int i = 0; ok && i < 400000; ++i) own.hot_event(h);
    own.close();
    own.unlock();
    ok = ok && fmt_ns::read_rank_file(mine).events.size() == 400000;
    fs::remove(mine);
    r.unlock();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(r.grow_ahead());
  for (int i = 0; i < 200000; ++i) r.hot_event(h);  // on through the next segment
  r.close();
  r.unlock();
  CHECK(fmt_ns::read_rank_file(file).events.size() == 400000);
  fs::remove(file);
}

TEST_CASE("tracer::Recorder::hot_event reads back through libprotobuf") {
  const fs::path file = temp_file("hot-pb");
  const std::string bytes = write_hot(true, 1, 64 * 1024, file);
  fs::remove(file);
  const smtrace::v1::Chunk chunk = only_chunk(bytes);
  const auto events = hot_calls();
  REQUIRE(chunk.event_size() == static_cast<int>(events.size()));
  CHECK(static_cast<int>(chunk.event(2).call()) == static_cast<int>(fmt_ns::Call::Put));
  CHECK(chunk.event(2).target_count() == 4);
  CHECK(chunk.event(2).target_datatype() == 7);
  CHECK(chunk.event(3).request() == 77);
  for (int i = 0; i < chunk.event_size(); ++i) CHECK_FALSE(chunk.event(i).pending());
}


TEST_CASE("tracer::Recorder::hot_event writes event's bytes for request completions") {
  const auto calls = completion_calls();
  int appended = 0;
  const auto write = [&](bool hot, int rounds, uint32_t chunk_bytes, const fs::path& file) {
    return write_completions(hot, rounds, chunk_bytes, file, appended);
  };
  for (const auto& read : hot_and_general_agree("hot-completions", 20, write)) {
    REQUIRE(read.size() == 20 * calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i) CHECK(read[i] == completed_event(calls[i], i));
  }
  // The Waits' ends were appended to their entries (Recorder::complete_last
  // with completed requests), not encoded again: all but those an entry's
  // chunk had no room for (the 200-byte chunks); the Waitall of 16 with
  // statuses outgrows the one-byte length and takes a two-byte one.
  CHECK(appended > 20);
  // One chunk, read by libprotobuf.
  const fs::path file = temp_file("hot-completions-pb");
  const std::string bytes = write(true, 1, 64 * 1024, file);
  fs::remove(file);
  const smtrace::v1::Chunk chunk = only_chunk(bytes);
  REQUIRE(chunk.event_size() == static_cast<int>(calls.size()));
  for (int i = 0; i < chunk.event_size(); ++i) {
    const auto& ev = chunk.event(i);
    const Completion& c = calls[static_cast<std::size_t>(i)];
    CHECK_FALSE(ev.pending());
    CHECK(static_cast<std::size_t>(ev.requests_size()) == c.in.requests.size());
    REQUIRE(static_cast<std::size_t>(ev.completed_size()) == c.done.size());
    for (std::size_t j = 0; j < c.done.size(); ++j) {
      CHECK(ev.completed(static_cast<int>(j)).request() == c.done[j].request);
      CHECK(ev.completed(static_cast<int>(j)).status().count() == c.done[j].status.count.value_or(0));
    }
    CHECK(ev.has_flag() == c.flag.has_value());
  }
  CHECK(chunk.event(1).rc() == 7);
  CHECK(chunk.event(1).requests(0) == 0);
}

TEST_SUITE_END();

TEST_CASE("tracer::Recorder::reopen appends after the end record of a closed file") {
  // A call after MPI_Finalize (handlers::record_after_finalize): the file
  // closed with its termination record gets one more chunk, which the
  // reader gives back as an event after the end (Termination::precedes).
  const fs::path file = temp_file("reopen");
  Recorder r;
  REQUIRE(r.open(file.string(), header(), 64 * 1024));
  r.lock();
  CHECK_FALSE(r.reopen());  // still open
  fmt_ns::Event init;
  init.call = fmt_ns::Call::Init;
  r.event(init);
  fmt_ns::Event fin;
  fin.call = fmt_ns::Call::Finalize;
  fin.t_start = 100;
  r.event(fin);
  fmt_ns::Termination end;
  end.kind = fmt_ns::TerminationKind::finalized;
  r.termination(end);
  r.close();
  const uint64_t closed_size = fs::file_size(file);
  REQUIRE(r.reopen());
  fmt_ns::Event after;
  after.call = fmt_ns::Call::Barrier;
  after.comm = 0;
  after.t_start = 200;
  r.event(after);
  r.close();
  CHECK(fs::file_size(file) > closed_size);
  const fmt_ns::RankTrace trace = fmt_ns::read_rank_file(file);
  for (const auto& p : trace.problems) MESSAGE(p.to_string());
  CHECK(trace.problems.empty());
  REQUIRE(trace.end);
  CHECK(trace.end->kind == fmt_ns::TerminationKind::finalized);
  REQUIRE(trace.events.size() == 3);
  CHECK_FALSE(trace.end->precedes(trace.events[1].seq));
  CHECK(trace.events[2].call == fmt_ns::Call::Barrier);
  CHECK(trace.end->precedes(trace.events[2].seq));
  // libprotobuf reads the appended chunk too.
  const std::string bytes = slurp(file);
  auto u32 = [&](std::size_t off) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[off + k])) << (8 * k);
    return v;
  };
  uint64_t chunks = 0;
  std::size_t at = fmt_ns::k_magic_size;
  at += fmt_ns::k_frame_header_size + u32(at);  // the header frame
  while (at + fmt_ns::k_frame_header_size <= bytes.size()) {
    const uint32_t len = u32(at);
    REQUIRE(at + fmt_ns::k_frame_header_size + len <= bytes.size());
    smtrace::v1::Chunk chunk;
    REQUIRE(chunk.ParseFromString(bytes.substr(at + fmt_ns::k_frame_header_size, len)));
    chunks += chunk.event_size() > 0;
    at += fmt_ns::k_frame_header_size + len;
  }
  CHECK(at == bytes.size());
  CHECK(chunks == 2);
  // A file changed since close() is not written to.
  {
    std::ofstream out(file, std::ios::binary | std::ios::app);
    out << "x";
  }
  CHECK_FALSE(r.reopen());
  r.unlock();
  fs::remove(file);
}
