#include "analyzer/datatypes.hpp"

#include <array>
#include <string_view>

#include "trace_format/call_semantics.hpp"
#include "trace_format/event.hpp"

namespace smtrace::analyzer {

std::string basic_type_name(uint32_t type) {
  if (std::string_view name = format::basic_type_name(type); !name.empty()) return std::string(name);
  if (type == k_type_other) return "a predefined datatype unknown to smtrace";
  return "datatype " + std::to_string(type);
}

std::string op_name(uint32_t op) {
  static constexpr std::array<std::string_view, 15> k_names = {
      "MPI_OP_NULL", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND",
      "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE",
      "MPI_NO_OP"};
  if (op < k_names.size()) return std::string(k_names[op]);
  if (op >= format::k_first_derived_id) return "user op " + std::to_string(op);
  return "a predefined op unknown to smtrace";
}

TypeClass type_class(uint32_t type) {
  switch (type) {
    case 1: case 16: return TypeClass::none;                      // MPI_CHAR, MPI_WCHAR
    case 2: case 3: case 5: case 6: case 7: case 8: case 9: case 10: case 11: case 12:
    case 18: case 19: case 20: case 21: case 22: case 23: case 24: case 25:
      return TypeClass::c_integer;
    case 13: case 14: case 15: return TypeClass::floating_point;
    case 17: return TypeClass::logical;
    case 26: case 27: case 28: return TypeClass::complex;
    case k_type_byte: return TypeClass::byte;
    case 29: case 30: case 31: case 32: case 33: case 34: return TypeClass::pair;
    case k_type_packed: case k_type_ub: case k_type_lb: return TypeClass::none;
    case 36: case 37: case 38: return TypeClass::multi_language;
    // Fortran (BasicType 41-60), in the classes of MPI-3.1 section 5.9.2.
    case 41: case 51: case 52: case 53: case 54: return TypeClass::fortran_integer;
    case 42: case 43: case 55: case 56: case 57: return TypeClass::floating_point;
    case 44: case 45: case 58: case 59: case 60: return TypeClass::complex;
    case 46: return TypeClass::logical;
    case 47: return TypeClass::none;                              // MPI_CHARACTER
    case 48: case 49: case 50: return TypeClass::pair;            // MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION
    default: return TypeClass::unknown;
  }
}

std::string type_class_name(TypeClass c) {
  switch (c) {
    case TypeClass::none: return "no class of MPI-3.1 section 5.9.2";
    case TypeClass::c_integer: return "C integer";
    case TypeClass::fortran_integer: return "Fortran integer";
    case TypeClass::floating_point: return "floating point";
    case TypeClass::logical: return "logical";
    case TypeClass::complex: return "complex";
    case TypeClass::byte: return "byte";
    case TypeClass::multi_language: return "multi-language";
    case TypeClass::pair: return "pair (value, index)";
    case TypeClass::unknown: return "unknown";
  }
  return "unknown";
}

std::pair<uint32_t, uint32_t> pair_parts(uint32_t type) {
  constexpr uint32_t k_int = 7, k_short = 5, k_long = 9, k_float = 13, k_double = 14, k_long_double = 15;
  switch (type) {
    case 29: return {k_float, k_int};
    case 30: return {k_double, k_int};
    case 31: return {k_long, k_int};
    case 32: return {k_int, k_int};
    case 33: return {k_short, k_int};
    case 34: return {k_long_double, k_int};
    case 48: return {41, 41};  // MPI_2INTEGER: two MPI_INTEGER
    case 49: return {42, 42};  // MPI_2REAL
    case 50: return {43, 43};  // MPI_2DOUBLE_PRECISION
    default: return {type, k_type_null};
  }
}

OpFit op_fits(uint32_t op, uint32_t type, OpUse use) {
  if (op >= format::k_first_derived_id) return use == OpUse::reduction ? OpFit::fits : OpFit::does_not_fit;
  const TypeClass c = type_class(type);
  if (c == TypeClass::unknown || op == k_op_null || op == k_op_other || op > format::k_op_no_op) return OpFit::unknown;
  auto fit = [](bool ok) { return ok ? OpFit::fits : OpFit::does_not_fit; };
  const bool integer = c == TypeClass::c_integer || c == TypeClass::fortran_integer || c == TypeClass::multi_language;
  switch (op) {
    case 1: case 2:  // MPI_MAX, MPI_MIN
      return fit(integer || c == TypeClass::floating_point);
    case 3: case 4:  // MPI_SUM, MPI_PROD
      return fit(integer || c == TypeClass::floating_point || c == TypeClass::complex);
    case 5: case 7: case 9:  // MPI_LAND, MPI_LOR, MPI_LXOR
      return fit(c == TypeClass::c_integer || c == TypeClass::logical);
    case 6: case 8: case 10:  // MPI_BAND, MPI_BOR, MPI_BXOR
      return fit(integer || c == TypeClass::byte);
    case k_op_minloc: case k_op_maxloc:
      return fit(c == TypeClass::pair);
    // RMA only (section 11.3.4), on any predefined type that holds data.
    case k_op_replace:
      return fit(use != OpUse::reduction && type != k_type_packed && type != k_type_ub && type != k_type_lb);
    case format::k_op_no_op:  // Get_accumulate and Fetch_and_op only
      return fit(use == OpUse::fetch_accumulate && type != k_type_packed && type != k_type_ub && type != k_type_lb);
    default: return OpFit::unknown;
  }
}

}  // namespace smtrace::analyzer
