#include "analyzer/signature.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "analyzer/datatypes.hpp"
#include "analyzer/footprint.hpp"

namespace smtrace::analyzer {
namespace {

bool unknown_basic(uint32_t type) {
  return type == k_type_null || type == k_type_other || type >= format::k_first_derived_id ||
         type_class(type) == TypeClass::unknown;
}

void append(Signature& s, uint32_t type, uint64_t count) {
  if (count == 0 || type == k_type_lb || type == k_type_ub) return;
  if (type == k_type_packed) s.packed = true;
  const auto [first, second] = pair_parts(type);
  if (second != k_type_null) {
    // A pair type is the struct of its two parts: one run each per element.
    for (uint64_t i = 0; i < count && i < (1u << 16); ++i) {
      append(s, first, 1);
      append(s, second, 1);
    }
    if (count >= (1u << 16)) s.known = false;  // not expanded in full: claim nothing
    return;
  }
  if (!s.runs.empty() && s.runs.back().type == type) s.runs.back().count += count;
  else s.runs.push_back({type, count});
}

}  // namespace

uint64_t Signature::elements() const {
  uint64_t n = 0;
  for (const auto& r : runs) n += r.count;
  return n * repeat;
}

Signature signature(const RankData& data, uint32_t datatype, int64_t count) {
  Signature s;
  if (count <= 0) return s;
  if (datatype < format::k_first_derived_id) {
    if (datatype == k_type_packed) {
      s.packed = true;
    } else if (unknown_basic(datatype)) {
      s.known = false;
      return s;
    }
    append(s, datatype, static_cast<uint64_t>(count));
    s.repeat = s.runs.empty() ? 0 : 1;
    return s;
  }
  const format::DatatypeDef* def = data.datatype(datatype);
  if (!def || def->truncated || (def->signature.empty() && def->size > 0)) {
    s.known = false;
    return s;
  }
  for (const format::TypeCount& tc : def->signature) {
    if (tc.type != k_type_packed && tc.type != k_type_lb && tc.type != k_type_ub && unknown_basic(tc.type)) {
      s.known = false;
      return s;
    }
    append(s, tc.type, tc.count);
  }
  if (s.runs.empty()) return s;
  if (s.runs.size() == 1) {
    s.runs[0].count *= static_cast<uint64_t>(count);
    s.repeat = 1;
  } else {
    s.repeat = static_cast<uint64_t>(count);
  }
  return s;
}

SignatureMatch compare_signatures(const Signature& a, const Signature& b) {
  using Kind = SignatureMatch::Kind;
  SignatureMatch m;
  if (!a.known || !b.known) return m;
  const uint64_t na = a.elements(), nb = b.elements();
  auto by_length = [&] {
    m.kind = na == nb ? Kind::same : na < nb ? Kind::prefix : Kind::longer;
    return m;
  };
  // MPI_PACKED matches any type (section 3.13). Its elements are bytes:
  // lengths compare only between two packed buffers (type-mismatch compares
  // the others' sizes in bytes).
  auto all_packed = [](const Signature& s) {
    return std::all_of(s.runs.begin(), s.runs.end(), [](const format::TypeCount& r) { return r.type == k_type_packed; });
  };
  if (a.packed || b.packed) {
    if (all_packed(a) && all_packed(b)) return by_length();
    return m;
  }
  if (na == 0 || nb == 0) return by_length();
  if (a.runs == b.runs && a.repeat == b.repeat) return by_length();
  // Walk both expansions run by run; runs may split or merge differently.
  struct Cursor {
    const Signature& s;
    std::size_t run = 0;
    uint64_t rep = 0, left = 0, offset = 0;
    explicit Cursor(const Signature& sig) : s(sig), left(sig.runs[0].count) {}
    bool done() const { return rep >= s.repeat; }
    uint32_t type() const { return s.runs[run].type; }
    void take(uint64_t n) {
      left -= n;
      offset += n;
      if (left) return;
      if (++run == s.runs.size()) run = 0, ++rep;
      if (!done()) left = s.runs[run].count;
    }
  };
  Cursor x(a), y(b);
  for (uint32_t steps = 0; steps < (1u << 20); ++steps) {
    if (x.done() || y.done()) return by_length();
    if (x.type() != y.type()) {
      m.kind = Kind::differ;
      m.at = x.offset;
      m.first = x.type();
      m.second = y.type();
      return m;
    }
    const uint64_t n = std::min(x.left, y.left);
    x.take(n);
    y.take(n);
  }
  return m;  // unknown: too long to walk
}

std::optional<uint64_t> buffer_bytes(const RankData& data, uint32_t datatype, int64_t count) {
  if (count <= 0) return 0;
  uint64_t size = 0;
  if (datatype < format::k_first_derived_id) {
    // A pair type's data is its two parts (the table has its extent, padding included).
    if (type_class(datatype) == TypeClass::pair) {
      const auto [a, b] = pair_parts(datatype);
      size = basic_type_size(a) + basic_type_size(b);
    } else {
      size = basic_type_size(datatype);
    }
    if (size == 0) return std::nullopt;
  } else {
    const format::DatatypeDef* def = data.datatype(datatype);
    if (!def) return std::nullopt;
    size = def->size;
  }
  return size * static_cast<uint64_t>(count);
}

Fit fit_of(const Signature& sent, std::optional<uint64_t> sent_bytes, const Signature& room,
           std::optional<uint64_t> room_bytes) {
  const SignatureMatch m = compare_signatures(sent, room);
  switch (m.kind) {
    case SignatureMatch::Kind::same: case SignatureMatch::Kind::prefix: return {};
    case SignatureMatch::Kind::differ:
      return {Fit::Kind::mismatch, fmt::format("basic element {}: {} sent, {} expected", m.at,
                                               basic_type_name(m.first), basic_type_name(m.second))};
    case SignatureMatch::Kind::longer:
      return {Fit::Kind::truncated,
              fmt::format("{} elements into room for {}{}", sent.elements(), room.elements(),
                          sent_bytes && room_bytes ? fmt::format(" ({} bytes into {})", *sent_bytes, *room_bytes)
                                                   : std::string())};
    case SignatureMatch::Kind::unknown:
      if (sent_bytes && room_bytes && *sent_bytes > *room_bytes) {
        return {Fit::Kind::truncated, fmt::format("{} bytes into {}", *sent_bytes, *room_bytes)};
      }
      return {};
  }
  return {};
}

Fit transfer_fit(const TransferSide& from, const TransferSide& into) {
  if (fits_at_once(from.datatype, from.count, into.datatype, into.count)) return {};
  return fit_of(signature(*from.data, from.datatype, from.count), buffer_bytes(*from.data, from.datatype, from.count),
                signature(*into.data, into.datatype, into.count), buffer_bytes(*into.data, into.datatype, into.count));
}

std::string describe_buffer(const RankData& data, uint32_t datatype, int64_t count) {
  if (datatype < format::k_first_derived_id) return fmt::format("{} x {}", count, basic_type_name(datatype));
  const format::DatatypeDef* def = data.datatype(datatype);
  if (!def) return fmt::format("{} x datatype {}", count, datatype);
  std::string runs;
  std::size_t shown = 0;
  for (const format::TypeCount& tc : def->signature) {
    if (tc.count == 0 || tc.type == k_type_lb || tc.type == k_type_ub) continue;
    if (shown++ == 4) {
      runs += ", ...";
      break;
    }
    runs += fmt::format("{}{} {}", runs.empty() ? "" : ", ", tc.count, basic_type_name(tc.type));
  }
  return fmt::format("{} x {} datatype [{}]", count, format::call_name(def->combiner), runs);
}

Makeup basic_makeup(const RankData& data, uint32_t datatype) {
  Makeup m;
  if (datatype < format::k_first_derived_id) {
    if (unknown_basic(datatype)) return m;
    m.kind = Makeup::Kind::one;
    m.type = datatype;
    return m;
  }
  const format::DatatypeDef* def = data.datatype(datatype);
  if (!def || def->truncated) return m;
  bool any = false;
  for (const format::TypeCount& tc : def->signature) {
    if (tc.count == 0 || tc.type == k_type_lb || tc.type == k_type_ub) continue;
    if (unknown_basic(tc.type) && tc.type != k_type_packed) return Makeup{};
    if (!any) {
      any = true;
      m.kind = Makeup::Kind::one;
      m.type = tc.type;
    } else if (tc.type != m.type) {
      m.kind = Makeup::Kind::several;
      m.other = tc.type;
      return m;
    }
  }
  return m;
}

}  // namespace smtrace::analyzer
