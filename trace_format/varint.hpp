// Internal to trace_format (and its tests): a raw protobuf wire writer over a
// caller-provided buffer. The caller guarantees room (see the bounds in
// wire.cpp); nothing here checks or allocates, which keeps the tracer's hot
// path to plain stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace smtrace::format::detail {

enum class WireType : uint32_t { varint = 0, fixed64 = 1, len = 2, fixed32 = 5 };

// Return the number of bytes of `value` as a varint.
constexpr std::size_t varint_size(uint64_t value) {
  std::size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

// Return `value` zigzag coded (sint32/sint64).
constexpr uint64_t zigzag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}
constexpr uint32_t zigzag32(int32_t value) {
  return (static_cast<uint32_t>(value) << 1) ^ static_cast<uint32_t>(value >> 31);
}

// Worst-case bytes of one scalar field (tag of a field < 2^11, varint).
inline constexpr std::size_t k_max_scalar_field = 2 + 10;

// Writes protobuf wire format at `p`; proto3 rules: default values are not
// written, fields with presence are written when present.
struct VarintWriter {
  unsigned char* p;

  // Always inlined: the tracer's encoders (wire.cpp) write one per field.
  [[gnu::always_inline]] void varint(uint64_t value) {
    while (value >= 0x80) {
      *p++ = static_cast<unsigned char>(value | 0x80);
      value >>= 7;
    }
    *p++ = static_cast<unsigned char>(value);
  }
  [[gnu::always_inline]] void tag(uint32_t field, WireType type) {
    varint((static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(type));
  }
  // uint32/uint64/enum/bool.
  void u(uint32_t field, uint64_t value) {
    if (value != 0) {
      tag(field, WireType::varint);
      varint(value);
    }
  }
  // int32/int64: negative values take 10 bytes, as protobuf sign-extends.
  void i(uint32_t field, int64_t value) { u(field, static_cast<uint64_t>(value)); }
  // sint64.
  void s(uint32_t field, int64_t value) { u(field, zigzag(value)); }
  // sint32.
  void s32(uint32_t field, int32_t value) { u(field, zigzag32(value)); }
  void opt_s32(uint32_t field, const std::optional<int32_t>& value) {
    if (value) {
      tag(field, WireType::varint);
      varint(zigzag32(*value));
    }
  }
  void opt_i(uint32_t field, const std::optional<int64_t>& value) {
    if (value) {
      tag(field, WireType::varint);
      varint(static_cast<uint64_t>(*value));
    }
  }
  void opt_u(uint32_t field, const std::optional<uint64_t>& value) {
    if (value) {
      tag(field, WireType::varint);
      varint(*value);
    }
  }
  void bytes(uint32_t field, std::string_view value) {
    if (!value.empty()) bytes_always(field, value);
  }
  void bytes_always(uint32_t field, std::string_view value) {
    tag(field, WireType::len);
    varint(value.size());
    std::memcpy(p, value.data(), value.size());
    p += value.size();
  }
  // Open a length-delimited field whose size is not known yet; one byte is
  // kept for the length and end_nested makes room when it needs more.
  unsigned char* begin_nested(uint32_t field) {
    tag(field, WireType::len);
    return p++;
  }
  void end_nested(unsigned char* mark) {
    std::size_t len = static_cast<std::size_t>(p - mark - 1);
    if (len < 0x80) {
      *mark = static_cast<unsigned char>(len);
      return;
    }
    std::size_t n = varint_size(len);
    std::memmove(mark + n, mark + 1, len);
    p = mark;
    varint(len);
    p += len;
  }
  // `values`: a std::vector, or format::HotList (wire.hpp).
  template <class List>
  void packed(uint32_t field, const List& values) {
    if (values.empty()) return;
    unsigned char* mark = begin_nested(field);
    for (auto v : values) varint(static_cast<uint64_t>(v));
    end_nested(mark);
  }
};

// Bytes a packed field of `n` varints may take at most.
constexpr std::size_t packed_bound(std::size_t n) { return 2 + 10 + 10 * n; }

}  // namespace smtrace::format::detail
