// An ostream that keeps what is written to it and the size of each write,
// for the tests of the renderers that write as they go (analyzer/report.hpp
// ReportSink): the bytes must be those of the string version, and no write
// may carry the whole report.
#pragma once

#include <algorithm>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace smtrace::test {

class RecordingBuf : public std::streambuf {
 public:
  std::string text;
  std::vector<std::streamsize> writes;  // size of each write, in order

  std::streamsize largest_write() const {
    return writes.empty() ? 0 : *std::max_element(writes.begin(), writes.end());
  }

 protected:
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    text.append(data, static_cast<size_t>(size));
    writes.push_back(size);
    return size;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    text += traits_type::to_char_type(c);
    writes.push_back(1);
    return c;
  }
};

struct RecordingStream {
  RecordingBuf buf;
  std::ostream out{&buf};
};

}  // namespace smtrace::test
