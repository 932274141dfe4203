// smtrace_filter_gcc.so: smtrace's load/store instrumentation as a GCC
// plugin (gcc -fplugin=..., added by smtrace-cc when the driver is GCC 12),
// the GIMPLE counterpart of llvm_pass.cpp: instead of -fsanitize=thread's
// call per access, each access tests its address inline against the hull
// of the watched ranges (smtrace_access_watch_hull, tracer/access_abi.hpp)
// and calls the runtime's existing __tsan_* entry only on a hit.
//
// Ground rules:
// - Where: one GIMPLE pass right before "optimized" (the last GIMPLE pass,
//   run at every -O level), after GCC's own ThreadSanitizer pass would have
//   run: the vectorizer has worked as in a plain build.
// - What: loads and stores of memory (not of registers, nor of locals whose
//   address is never taken, nor loads of read-only globals), vector ones
//   included (16 bytes: __tsan_read16; sizes other than 1/2/4/8/16:
//   __tsan_{read,write}_range), memcpy/memmove/memset builtins (load of the
//   source first) and the __atomic/__sync builtins (a load as a load,
//   anything that writes as a store).
// - The hull's two words are read with relaxed atomic loads (no data race
//   with the publishing thread) once per stretch of a basic block without
//   calls: any call may be an MPI call that changes the watch set, so the
//   words are read again after it. A hit calls the runtime with the
//   access's location; its return address maps to the access's line.
// - __tsan_func_entry(return address) / __tsan_func_exit around every
//   function with accesses or calls keep the shadow stack (not on C++
//   exceptions unwinding through the function: docs/tracer.md).
// - The test, as in llvm_pass.cpp: off = max(size, 16) - 16,
//   hit = (addr + off) - lo < (hi - lo) + off; for a run-time size n:
//   n != 0 && addr < hi && addr + n > lo + 15.
//
// GCC loads only plugins that declare themselves GPL compatible
// (plugin_is_GPL_compatible).
#include <gcc-plugin.h>
#include <plugin-version.h>

#include <backend.h>
#include <tree.h>
#include <memmodel.h>
#include <gimple.h>
#include <tree-pass.h>
#include <ssa.h>
#include <cgraph.h>
#include <fold-const.h>
#include <gimplify.h>
#include <gimple-iterator.h>
#include <gimplify-me.h>
#include <tree-cfg.h>
#include <tree-into-ssa.h>
#include <stringpool.h>
#include <attribs.h>
#include <asan.h>
#include <builtins.h>
#include <stor-layout.h>
#include <varasm.h>
#include <context.h>
#include <diagnostic-core.h>

#include <string>
#include <vector>

__attribute__((visibility("default"))) int plugin_is_GPL_compatible;

namespace {

constexpr int k_small = 16;  // RangeTable::k_max_small: the hull's lo is 15 bytes early

// The declarations the instrumentation calls, rooted for GCC's collector.
enum Decl : int {
  k_hull, k_read1, k_read2, k_read4, k_read8, k_read16, k_write1, k_write2, k_write4, k_write8, k_write16,
  k_read_range, k_write_range, k_entry, k_exit, k_decls
};
tree g_decls[k_decls];
const ggc_root_tab g_roots[] = {
    {&g_decls[0], k_decls, sizeof(tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node},
    LAST_GGC_ROOT_TAB,
};

tree function_decl(const char* name, tree type) {
  tree decl = build_fn_decl(name, type);  // external, public, nothrow
  TREE_NOTHROW(decl) = 1;
  DECL_ATTRIBUTES(decl) = tree_cons(get_identifier("leaf"), NULL_TREE, DECL_ATTRIBUTES(decl));
  return decl;
}

void make_decls() {
  if (g_decls[k_hull]) return;
  tree hull_type = build_array_type_nelts(pointer_sized_int_node, 2);
  tree hull = build_decl(UNKNOWN_LOCATION, VAR_DECL, get_identifier("smtrace_access_watch_hull"), hull_type);
  TREE_PUBLIC(hull) = 1;
  DECL_EXTERNAL(hull) = 1;
  TREE_ADDRESSABLE(hull) = 1;
  DECL_ARTIFICIAL(hull) = 1;
  g_decls[k_hull] = hull;
  tree one = build_function_type_list(void_type_node, ptr_type_node, NULL_TREE);
  tree two = build_function_type_list(void_type_node, ptr_type_node, pointer_sized_int_node, NULL_TREE);
  for (int i = 0; i < 5; ++i) {
    const std::string n = std::to_string(1 << i);
    g_decls[k_read1 + i] = function_decl(("__tsan_read" + n).c_str(), one);
    g_decls[k_write1 + i] = function_decl(("__tsan_write" + n).c_str(), one);
  }
  g_decls[k_read_range] = function_decl("__tsan_read_range", two);
  g_decls[k_write_range] = function_decl("__tsan_write_range", two);
  g_decls[k_entry] = function_decl("__tsan_func_entry", one);
  g_decls[k_exit] = function_decl("__tsan_func_exit", build_function_type_list(void_type_node, NULL_TREE));
}

// One access: `expr` (a memory reference) or `addr` and `size` (a call).
struct Access {
  gimple* stmt;
  tree expr = NULL_TREE;
  tree addr = NULL_TREE;
  tree size = NULL_TREE;  // bytes, a constant or a run-time value
  bool store = false;
  bool reload = false;    // read the hull again first (a call came before)
};

// Return the reference to instrument for `expr` (a bit-field: its
// representative), or NULL_TREE when it cannot be watched.
tree watchable(tree expr, bool store) {
  if (TREE_CODE(expr) == SSA_NAME || CONSTANT_CLASS_P(expr) || TREE_CODE(expr) == CONSTRUCTOR) return NULL_TREE;
  if (!handled_component_p(expr) && !DECL_P(expr) && TREE_CODE(expr) != MEM_REF && TREE_CODE(expr) != TARGET_MEM_REF)
    return NULL_TREE;
  poly_int64 bitsize, bitpos;
  tree offset;
  machine_mode mode;
  int unsignedp, reversep, volatilep = 0;
  tree base = get_inner_reference(expr, &bitsize, &bitpos, &offset, &mode, &unsignedp, &reversep, &volatilep);
  if (DECL_P(base)) {
    if (DECL_HARD_REGISTER(base)) return NULL_TREE;
    if (!is_global_var(base) && !may_be_aliased(base)) return NULL_TREE;  // never handed to MPI
    if (!store && is_global_var(base) && TREE_READONLY(base)) return NULL_TREE;
  }
  if (TREE_CODE(expr) == COMPONENT_REF && DECL_BIT_FIELD_TYPE(TREE_OPERAND(expr, 1))) {
    tree repr = DECL_BIT_FIELD_REPRESENTATIVE(TREE_OPERAND(expr, 1));
    if (!repr) return NULL_TREE;
    expr = build3(COMPONENT_REF, TREE_TYPE(repr), TREE_OPERAND(expr, 0), repr, TREE_OPERAND(expr, 2));
  }
  const HOST_WIDE_INT size = int_size_in_bytes(TREE_TYPE(expr));
  if (size <= 0) return NULL_TREE;
  return expr;
}

// The access size of an __atomic_*_N / __sync_*_N builtin (0: not one).
int atomic_size(tree fndecl) {
  const char* name = IDENTIFIER_POINTER(DECL_NAME(fndecl));
  const std::string s(name);
  if (s.rfind("__atomic_", 0) != 0 && s.rfind("__sync_", 0) != 0) return 0;
  const std::size_t us = s.rfind('_');
  if (us == std::string::npos) return 0;
  const std::string n = s.substr(us + 1);
  if (n == "1" || n == "2" || n == "4" || n == "8" || n == "16") return std::stoi(n);
  return 0;
}

// memcpy & co. called by name (-fno-builtin: not GCC's builtins), as the
// builtin they would be.
built_in_function by_name(tree fndecl) {
  if (!DECL_NAME(fndecl) || !TREE_PUBLIC(fndecl)) return END_BUILTINS;
  const std::string name(IDENTIFIER_POINTER(DECL_NAME(fndecl)));
  if (name == "memcpy" || name == "__memcpy_chk") return BUILT_IN_MEMCPY;
  if (name == "memmove" || name == "__memmove_chk") return BUILT_IN_MEMMOVE;
  if (name == "memset" || name == "__memset_chk") return BUILT_IN_MEMSET;
  return END_BUILTINS;
}

void call_accesses(gcall* call, std::vector<Access>& out) {
  tree fndecl = gimple_call_fndecl(call);
  if (!fndecl) return;
  const bool builtin = fndecl_built_in_p(fndecl, BUILT_IN_NORMAL);
  // Direct calls of the C library's functions: the runtime's interposed
  // ones record only calls from modules that called __tsan_init, which
  // plugin-built ones never do.
  const built_in_function code = builtin ? DECL_FUNCTION_CODE(fndecl) : by_name(fndecl);
  if (!builtin && code == END_BUILTINS) return;
  Access a{call};
  switch (code) {
    case BUILT_IN_MEMCPY: case BUILT_IN_MEMMOVE: case BUILT_IN_MEMCPY_CHK: case BUILT_IN_MEMMOVE_CHK:
    case BUILT_IN_MEMPCPY: case BUILT_IN_MEMPCPY_CHK:
      if (gimple_call_num_args(call) < 3) return;
      a.addr = gimple_call_arg(call, 1);
      a.size = gimple_call_arg(call, 2);
      out.push_back(a);
      a.addr = gimple_call_arg(call, 0);
      a.store = true;
      out.push_back(a);
      return;
    case BUILT_IN_MEMSET: case BUILT_IN_MEMSET_CHK:
      if (gimple_call_num_args(call) < 3) return;
      a.addr = gimple_call_arg(call, 0);
      a.size = gimple_call_arg(call, 2);
      a.store = true;
      out.push_back(a);
      return;
    default:
      break;
  }
  const int n = builtin ? atomic_size(fndecl) : 0;
  if (n == 0 || gimple_call_num_args(call) < 1 || !POINTER_TYPE_P(TREE_TYPE(gimple_call_arg(call, 0)))) return;
  const std::string name(IDENTIFIER_POINTER(DECL_NAME(fndecl)));
  a.addr = gimple_call_arg(call, 0);
  a.size = build_int_cst(pointer_sized_int_node, n);
  a.store = name.rfind("__atomic_load_", 0) != 0;
  out.push_back(a);
}

tree as_uptr(gimple_stmt_iterator* gsi, tree value) {
  return force_gimple_operand_gsi(gsi, fold_convert(pointer_sized_int_node, value), true, NULL_TREE, true,
                                  GSI_SAME_STMT);
}

// Insert `lhs = __atomic_load_8(&hull[index], relaxed)` before `gsi`.
tree load_hull_word(gimple_stmt_iterator* gsi, int index, location_t loc) {
  tree word = build4(ARRAY_REF, pointer_sized_int_node, g_decls[k_hull], build_int_cst(integer_type_node, index),
                     NULL_TREE, NULL_TREE);
  tree fn = builtin_decl_explicit(BUILT_IN_ATOMIC_LOAD_8);
  gcall* load = gimple_build_call(fn, 2, build_fold_addr_expr(word), build_int_cst(integer_type_node, MEMMODEL_RELAXED));
  tree lhs = make_ssa_name(TREE_TYPE(TREE_TYPE(fn)));
  gimple_call_set_lhs(load, lhs);
  gimple_set_location(load, loc);
  gsi_insert_before(gsi, load, GSI_SAME_STMT);
  return as_uptr(gsi, lhs);
}

struct Hull {
  tree lo = NULL_TREE, hi = NULL_TREE;
};

void instrument(const Access& a, Hull& hull) {
  gimple_stmt_iterator gsi = gsi_for_stmt(a.stmt);
  const location_t loc = gimple_location(a.stmt);
  tree addr = a.addr ? a.addr : build_fold_addr_expr(unshare_expr(a.expr));
  addr = force_gimple_operand_gsi(&gsi, addr, true, NULL_TREE, true, GSI_SAME_STMT);
  HOST_WIDE_INT bytes = 0;
  tree size = a.size;
  if (!size) size = build_int_cst(pointer_sized_int_node, int_size_in_bytes(TREE_TYPE(a.expr)));
  if (tree_fits_uhwi_p(size)) {
    bytes = tree_to_uhwi(size);
    if (bytes == 0) return;
  }
  if (!hull.lo || a.reload) {
    hull.lo = load_hull_word(&gsi, 0, loc);
    hull.hi = load_hull_word(&gsi, 1, loc);
  }
  tree uaddr = as_uptr(&gsi, addr);
  tree hit;
  if (bytes > 0) {
    tree off = build_int_cst(pointer_sized_int_node, bytes > k_small ? bytes - k_small : 0);
    tree lhs = fold_build2(MINUS_EXPR, pointer_sized_int_node,
                           fold_build2(PLUS_EXPR, pointer_sized_int_node, uaddr, off), hull.lo);
    tree rhs = fold_build2(PLUS_EXPR, pointer_sized_int_node,
                           fold_build2(MINUS_EXPR, pointer_sized_int_node, hull.hi, hull.lo), off);
    hit = fold_build2(LT_EXPR, boolean_type_node, lhs, rhs);
  } else {
    tree n = fold_convert(pointer_sized_int_node, size);
    tree nonempty = fold_build2(NE_EXPR, boolean_type_node, n, build_zero_cst(pointer_sized_int_node));
    tree below = fold_build2(LT_EXPR, boolean_type_node, uaddr, hull.hi);
    tree first = fold_build2(PLUS_EXPR, pointer_sized_int_node, hull.lo,
                             build_int_cst(pointer_sized_int_node, k_small - 1));
    tree above = fold_build2(GT_EXPR, boolean_type_node, fold_build2(PLUS_EXPR, pointer_sized_int_node, uaddr, n),
                             first);
    hit = fold_build2(TRUTH_AND_EXPR, boolean_type_node, nonempty, fold_build2(TRUTH_AND_EXPR, boolean_type_node, below, above));
  }
  hit = force_gimple_operand_gsi(&gsi, hit, true, NULL_TREE, true, GSI_SAME_STMT);
  gcond* cond = gimple_build_cond(NE_EXPR, hit, boolean_false_node, NULL_TREE, NULL_TREE);
  gimple_set_location(cond, loc);
  basic_block then_bb, join_bb;
  gimple_stmt_iterator at = create_cond_insert_point(&gsi, true, false, true, &then_bb, &join_bb);
  gsi_insert_after(&at, cond, GSI_NEW_STMT);
  gimple_stmt_iterator then_gsi = gsi_start_bb(then_bb);
  gcall* call;
  if (bytes > 0 && bytes <= k_small && pow2p_hwi(bytes)) {
    const int index = exact_log2(bytes);
    call = gimple_build_call(g_decls[(a.store ? k_write1 : k_read1) + index], 1, addr);
  } else {
    tree n = force_gimple_operand_gsi(&then_gsi, fold_convert(pointer_sized_int_node, size), true, NULL_TREE, true,
                                      GSI_SAME_STMT);
    call = gimple_build_call(g_decls[a.store ? k_write_range : k_read_range], 2, addr, n);
  }
  gimple_set_location(call, loc);
  gsi_insert_before(&then_gsi, call, GSI_SAME_STMT);
}

// Return true for __attribute__((no_sanitize_thread)) or
// no_sanitize("thread"), which GCC keeps as flags in "no_sanitize".
bool no_sanitize_thread(tree decl) {
  for (tree a = lookup_attribute("no_sanitize", DECL_ATTRIBUTES(decl)); a;
       a = lookup_attribute("no_sanitize", TREE_CHAIN(a)))
    if (TREE_VALUE(a) && TREE_CODE(TREE_VALUE(a)) == INTEGER_CST && tree_fits_uhwi_p(TREE_VALUE(a)) &&
        (tree_to_uhwi(TREE_VALUE(a)) & SANITIZE_THREAD))
      return true;
  return false;
}

void shadow_frame(function* fn) {
  gimple_seq seq = NULL;
  gcall* ra = gimple_build_call(builtin_decl_implicit(BUILT_IN_RETURN_ADDRESS), 1, integer_zero_node);
  tree pc = make_ssa_name(ptr_type_node);
  gimple_call_set_lhs(ra, pc);
  gimple_set_location(ra, fn->function_start_locus);
  gimple_seq_add_stmt_without_update(&seq, ra);
  gcall* entry = gimple_build_call(g_decls[k_entry], 1, pc);
  gimple_set_location(entry, fn->function_start_locus);
  gimple_seq_add_stmt_without_update(&seq, entry);
  gsi_insert_seq_on_edge_immediate(single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fn)), seq);
  basic_block bb;
  FOR_EACH_BB_FN(bb, fn) {
    gimple* last = last_stmt(bb);
    if (!last || gimple_code(last) != GIMPLE_RETURN) continue;
    gimple_stmt_iterator gsi = gsi_last_bb(bb);
    gcall* exit = gimple_build_call(g_decls[k_exit], 0);
    gimple_set_location(exit, gimple_location(last));
    gsi_insert_before(&gsi, exit, GSI_SAME_STMT);
  }
}

const pass_data k_pass_data = {
    GIMPLE_PASS, "smtrace_filter", OPTGROUP_NONE, TV_NONE, PROP_ssa | PROP_cfg, 0, 0, 0,
    TODO_update_ssa_only_virtuals,
};

class FilterPass : public gimple_opt_pass {
 public:
  explicit FilterPass(gcc::context* ctxt) : gimple_opt_pass(k_pass_data, ctxt) {}
  opt_pass* clone() override { return new FilterPass(m_ctxt); }
  bool gate(function*) override { return true; }

  unsigned int execute(function* fn) override {
    const char* name = DECL_NAME(fn->decl) ? IDENTIFIER_POINTER(DECL_NAME(fn->decl)) : "";
    if (strncmp(name, "__tsan_", 7) == 0 || no_sanitize_thread(fn->decl)) return 0;
    make_decls();
    std::vector<Access> accesses;
    bool calls = false;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fn) {
      bool reload = true;  // a new block: read the hull at its first access
      for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
        gimple* stmt = gsi_stmt(gsi);
        if (is_gimple_debug(stmt)) continue;
        const std::size_t before = accesses.size();
        if (gcall* call = dyn_cast<gcall*>(stmt)) {
          if (!gimple_call_internal_p(call)) {
            calls = true;
            call_accesses(call, accesses);
          }
        } else if (is_gimple_assign(stmt)) {
          // The load first (*p = *q), as the runtime's memcpy records it.
          if (gimple_assign_load_p(stmt)) {
            if (tree e = watchable(gimple_assign_rhs1(stmt), false)) accesses.push_back(Access{stmt, e});
          }
          if (gimple_store_p(stmt)) {
            if (tree e = watchable(gimple_assign_lhs(stmt), true))
              accesses.push_back(Access{stmt, e, NULL_TREE, NULL_TREE, true});
          }
        }
        for (std::size_t i = before; i < accesses.size(); ++i) {
          accesses[i].reload = reload;
          reload = false;
        }
        // A call may change the watch set (an MPI call): read the hull again.
        if (is_gimple_call(stmt) && !gimple_call_internal_p(stmt)) reload = true;
      }
    }
    Hull hull;
    for (const Access& a : accesses) {
      if (a.reload) hull = Hull();
      instrument(a, hull);
    }
    if (accesses.empty() && !calls) return 0;
    shadow_frame(fn);
    free_dominance_info(CDI_DOMINATORS);
    mark_virtual_operands_for_renaming(fn);
    return TODO_update_ssa_only_virtuals;
  }
};

}  // namespace

__attribute__((visibility("default"))) int plugin_init(plugin_name_args* info, plugin_gcc_version* version) {
  if (!plugin_default_version_check(version, &gcc_version)) {
    error("smtrace: %s was built for GCC %s", info->base_name, gcc_version.basever);
    return 1;
  }
  register_callback(info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL, const_cast<ggc_root_tab*>(g_roots));
  register_pass_info pass;
  pass.pass = new FilterPass(g);
  pass.reference_pass_name = "optimized";
  pass.ref_pass_instance_number = 1;
  pass.pos_op = PASS_POS_INSERT_BEFORE;
  register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
  return 0;
}
