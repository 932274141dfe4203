// Type signatures (MPI-3.1 section 3.3.1, 4.1): the sequence of basic types
// a buffer of (count, datatype) holds, compared the way MPI matches a send
// with its receive, a collective's contributions with each other, and an
// RMA origin with its target. One comparison for every check that asks
// (collective-mismatch, type-mismatch).
//
// A derived type's signature is its recorded DatatypeDef.signature (the
// basic types of its type map, flattened by the tracer) repeated `count`
// times; MPI_LB/MPI_UB carry no data and are left out. The predefined pair
// types (MPI_2INT, MPI_FLOAT_INT, ...) are structs of two basic types
// (MPI-3.1 section 5.9.4) and count as those two, so one MPI_2INT matches
// two MPI_INT. Types are compared by name, as MPI does: MPI_INT does not
// match MPI_INT32_T, and 8 x MPI_BYTE does not match 2 x MPI_INT.
// MPI_PACKED matches anything (section 3.13); a type smtrace does not know
// (BASIC_OTHER, a truncated definition, one not recorded) makes a signature
// unknown, about which nothing is claimed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/rank_data.hpp"

namespace smtrace::analyzer {

// `runs` (adjacent equal types merged, no empty runs) repeated `repeat`
// times; repeat == 0 is the empty signature.
struct Signature {
  std::vector<format::TypeCount> runs;
  uint64_t repeat = 0;
  bool known = true;
  bool packed = false;  // MPI_PACKED somewhere: matches any signature
  // Return the number of basic elements.
  uint64_t elements() const;
};

// Return the signature of `count` elements of `datatype` as rank `data`
// defined it (count <= 0: empty).
Signature signature(const RankData& data, uint32_t datatype, int64_t count);

// How two signatures compare, element by element.
struct SignatureMatch {
  enum class Kind : uint8_t {
    same,       // the same sequence
    prefix,     // the first is a proper prefix of the second
    longer,     // the second is a proper prefix of the first
    differ,     // element `at` differs (0-based)
    unknown,    // a side is unknown, or the walk would take too long
  } kind = Kind::unknown;
  uint64_t at = 0;          // differ: the first differing element
  uint32_t first = 0;       // differ: its basic type in the first signature
  uint32_t second = 0;      // and in the second
};
// Compare `a` with `b`. A side with MPI_PACKED matches anything: unknown,
// unless both are all MPI_PACKED (then compared by length in bytes).
SignatureMatch compare_signatures(const Signature& a, const Signature& b);

// Return the bytes of data `count` elements of `datatype` hold (its size,
// not its extent; MPI_Pack_size's least value), nullopt when the type is
// unknown (count <= 0: 0).
std::optional<uint64_t> buffer_bytes(const RankData& data, uint32_t datatype, int64_t count);

// How a message fits the buffer that receives it: its signature must be a
// prefix of the buffer's (MPI-3.1 section 3.3.1), and it must not be longer
// (section 3.2.4: MPI_ERR_TRUNCATE). Where a signature is unknown only the
// sizes in bytes are compared, when both are known.
struct Fit {
  enum class Kind : uint8_t { fine, mismatch, truncated } kind = Kind::fine;
  std::string detail;  // "basic element 0: MPI_INT sent, MPI_FLOAT expected", "8 elements into room for 4 (...)"
};
Fit fit_of(const Signature& sent, std::optional<uint64_t> sent_bytes, const Signature& room,
           std::optional<uint64_t> room_bytes);

// One side of a transfer: `count` elements of `datatype` of rank `data`'s.
struct TransferSide {
  const RankData* data = nullptr;
  uint32_t datatype = 0;
  int64_t count = 0;
};

// Return true when transfer_fit() of these counts and datatypes is fine
// without looking at either rank's datatypes: a negative count
// (invalid-argument's business), or the same predefined type into room for
// as many elements or more. Most messages are such; this spares building
// their signatures.
inline bool fits_at_once(uint32_t sent_type, int64_t sent_count, uint32_t room_type, int64_t room_count) {
  return sent_count < 0 || room_count < 0 ||
         (sent_type == room_type && sent_type < format::k_first_derived_id && sent_count <= room_count);
}

// How what `from` sends fits the buffer `into` that takes it (fit_of of
// their signatures and sizes).
Fit transfer_fit(const TransferSide& from, const TransferSide& into);

// Return "2 x MPI_INT" or "3 x Type_vector datatype [2 MPI_INT]".
std::string describe_buffer(const RankData& data, uint32_t datatype, int64_t count);

// The basic types a datatype is made of (MPI-3.1 section 11.3.4: an
// accumulate's datatypes are made of one predefined type).
struct Makeup {
  enum class Kind : uint8_t { one, several, unknown } kind = Kind::unknown;
  uint32_t type = 0;    // one: that type; several: the first
  uint32_t other = 0;   // several: the second
};
Makeup basic_makeup(const RankData& data, uint32_t datatype);

}  // namespace smtrace::analyzer
