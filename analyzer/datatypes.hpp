// What the analyzer knows about the predefined datatypes and reduction ops
// of the trace (smtrace.proto BasicType and Op, by value): their names, the
// classes MPI-3.1 section 5.9.2 sorts basic types into, and which predefined
// op applies to which class. One table for every check that names a type
// or an op, or asks whether an op fits a type.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace smtrace::analyzer {

inline constexpr uint32_t k_type_null = 0;     // MPI_DATATYPE_NULL, or not recorded
inline constexpr uint32_t k_type_byte = 4;
inline constexpr uint32_t k_type_packed = 35;
inline constexpr uint32_t k_type_ub = 39;
inline constexpr uint32_t k_type_lb = 40;
inline constexpr uint32_t k_type_other = 63;   // predefined by the library, unknown to smtrace

inline constexpr uint32_t k_op_null = 0;       // MPI_OP_NULL, or not recorded
inline constexpr uint32_t k_op_minloc = 11;
inline constexpr uint32_t k_op_maxloc = 12;
inline constexpr uint32_t k_op_replace = 13;
inline constexpr uint32_t k_op_other = 63;

// "MPI_INT" for a BasicType value; "datatype N" for a derived one.
std::string basic_type_name(uint32_t type);
// "MPI_SUM" for an Op value; "user op N" for N >= 64.
std::string op_name(uint32_t op);

// The classes of MPI-3.1 section 5.9.2 (C types; the multi-language types
// MPI_AINT, MPI_OFFSET, MPI_COUNT are a class of their own there).
enum class TypeClass : uint8_t {
  none,            // no class: MPI_CHAR, MPI_WCHAR (characters), MPI_PACKED, MPI_UB/LB
  c_integer,       // MPI_INT ... MPI_UINT64_T, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR
  fortran_integer, // MPI_INTEGER, MPI_INTEGER1 ... MPI_INTEGER8
  floating_point,  // MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REAL4 ...
  logical,         // MPI_C_BOOL, MPI_LOGICAL
  complex,         // MPI_C_*_COMPLEX, MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_COMPLEX8 ...
  byte,            // MPI_BYTE
  multi_language,  // MPI_AINT, MPI_OFFSET, MPI_COUNT
  pair,            // MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION
  unknown,         // not a BasicType smtrace knows (BASIC_OTHER, unrecorded)
};
TypeClass type_class(uint32_t type);
// Return "C integer", "floating point", ... for a message.
std::string type_class_name(TypeClass c);

// Return the two basic types of pair type `type` (MPI_2INT: MPI_INT, MPI_INT),
// or {type, k_type_null} for any other type.
std::pair<uint32_t, uint32_t> pair_parts(uint32_t type);

// Where an op is used: a collective reduction, an RMA accumulate
// (Accumulate, Raccumulate), a fetching accumulate (Get_accumulate,
// Fetch_and_op: MPI_NO_OP too).
enum class OpUse : uint8_t { reduction, accumulate, fetch_accumulate };
// Return whether predefined op `op` is defined for basic type `type` where it
// is used as `use` (MPI-3.1 sections 5.9.2, 5.9.4, 11.3.4); nullopt when
// smtrace cannot tell (an op or type it does not know). User ops (>= 64)
// apply to any type in reductions and to none in accumulates (section
// 11.3.4: "user-defined functions cannot be used").
enum class OpFit : uint8_t { fits, does_not_fit, unknown };
OpFit op_fits(uint32_t op, uint32_t type, OpUse use);

}  // namespace smtrace::analyzer
