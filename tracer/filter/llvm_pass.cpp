// libsmtrace_filter_llvm.so: smtrace's load/store instrumentation as a
// clang pass plugin (clang -fpass-plugin=..., added by smtrace-cc when the
// driver is clang 14). It stands in for -fsanitize=thread: where
// ThreadSanitizer's pass calls the runtime for every access, this one tests
// the address inline against the hull of the watched ranges that
// libsmtrace_tsan.so publishes (smtrace_access_watch_hull,
// tracer/access_abi.hpp) and calls the runtime's existing entry points
// (__tsan_read4, __tsan_write_range, ...) only when the access may touch it.
// Runtime, tracer and reports are the same for both paths
// (docs/tracer.md, "Load/store capture").
//
// Ground rules:
// - What is instrumented: every load and store (atomic ones too), the
//   memcpy/memmove/memset intrinsics and direct calls of those functions.
//   Not instrumented, as in ThreadSanitizer's pass: accesses to stack
//   slots whose address never escapes (MPI cannot have been given them)
//   and loads of constant globals. Accesses of sizes other than 1, 2, 4, 8
//   and 16 bytes (which ThreadSanitizer's pass drops) go to
//   __tsan_{read,write}_range. Masked vector loads and stores and
//   gathers/scatters are not instrumented (docs/tracer.md).
// - The call on a hit carries the access's debug location: the runtime
//   takes the call's return address as the access's site, so source
//   locations come out as with -fsanitize=thread. __tsan_func_entry/exit
//   keep the shadow stack, as ThreadSanitizer's pass does (exceptions
//   included).
// - Where: functions get the sanitize_thread attribute at the start of the
//   pipeline, so that the optimizer introduces no load or store the program
//   does not make (no speculative loads, no widened stores), exactly as
//   under -fsanitize=thread; the instrumentation runs at the end (after the
//   vectorizer, which thus works as in a plain build), removes the
//   attribute again, and lets EarlyCSE and LICM share and hoist the hull's
//   loads: they are `unordered` atomic loads (the hull changes under other
//   threads), re-read after any call that may write memory (an MPI call
//   that changes the watch set), the runtime calls are declared to touch
//   only memory the program cannot see, and the instrumented accesses are
//   marked (scoped noalias metadata) as never touching the hull, so a loop
//   whose only calls are these keeps the hull in registers.
// - The hit test, for an access of `size` bytes at `addr`, with
//   off = max(size, 16) - 16 and the hull {lo, hi} (lo = first watched
//   byte - 15, hi = one past the last):  (addr + off) - lo < (hi - lo) + off
//   (one subtraction and one compare once the hull is in registers; never
//   true while nothing is watched, lo = hi = 0). Sizes only known at run
//   time (memcpy & co.): n != 0 && addr < hi && addr + n > lo + 15.
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CaptureTracking.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/EscapeEnumerator.h>

#include "tracer/access_abi.hpp"

using namespace llvm;

namespace {

constexpr uint64_t k_small = 16;  // RangeTable::k_max_small: the hull's lo is 15 bytes early

// Mark every defined function sanitize_thread (see the ground rules).
struct MarkPass : PassInfoMixin<MarkPass> {
  PreservedAnalyses run(Module& m, ModuleAnalysisManager&) {
    for (Function& f : m)
      if (!f.isDeclaration()) f.addFnAttr(Attribute::SanitizeThread);
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

// One access to instrument.
struct Access {
  Instruction* at;       // the hit call goes right before it
  Value* addr;
  Value* size = nullptr; // a run-time size (memcpy & co.), else `bytes`
  uint64_t bytes = 0;
  bool store = false;
  bool vptr = false;     // a C++ vtable pointer (load or update)
  Value* stored = nullptr;  // the new vtable pointer of a vptr update
};

class Instrumenter {
 public:
  explicit Instrumenter(Module& m) : m_module(m), m_ctx(m.getContext()), m_layout(m.getDataLayout()) {
    m_intptr = m_layout.getIntPtrType(m_ctx);
    m_ptr = Type::getInt8PtrTy(m_ctx);
    // A C++ file that includes tracer/access_abi.hpp declares it already,
    // with a named type of the same layout.
    m_hull_type = StructType::get(m_intptr, m_intptr);
    if (GlobalVariable* g = m.getGlobalVariable("smtrace_access_watch_hull"); g) {
      auto* type = dyn_cast<StructType>(g->getValueType());
      if (type && type->getNumElements() == 2 && type->getElementType(0) == m_intptr &&
          type->getElementType(1) == m_intptr)
        m_hull_type = type;
    }
    m_hull = m.getOrInsertGlobal("smtrace_access_watch_hull", m_hull_type);
    AttrBuilder private_memory(m_ctx);
    private_memory.addAttribute(Attribute::InaccessibleMemOnly);
    private_memory.addAttribute(Attribute::NoUnwind);
    AttrBuilder vptr_memory(m_ctx);
    vptr_memory.addAttribute(Attribute::InaccessibleMemOrArgMemOnly);
    vptr_memory.addAttribute(Attribute::NoUnwind);
    const AttributeList quiet = AttributeList::get(m_ctx, AttributeList::FunctionIndex, private_memory);
    const AttributeList vptr_quiet = AttributeList::get(m_ctx, AttributeList::FunctionIndex, vptr_memory);
    Type* void_ty = Type::getVoidTy(m_ctx);
    for (unsigned i = 0; i < 5; ++i) {
      const std::string n = std::to_string(1u << i);
      m_read[i] = m.getOrInsertFunction("__tsan_read" + n, quiet, void_ty, m_ptr);
      m_write[i] = m.getOrInsertFunction("__tsan_write" + n, quiet, void_ty, m_ptr);
    }
    m_read_range = m.getOrInsertFunction("__tsan_read_range", quiet, void_ty, m_ptr, m_intptr);
    m_write_range = m.getOrInsertFunction("__tsan_write_range", quiet, void_ty, m_ptr, m_intptr);
    m_vptr_read = m.getOrInsertFunction("__tsan_vptr_read", quiet, void_ty, m_ptr);
    m_vptr_update = m.getOrInsertFunction("__tsan_vptr_update", vptr_quiet, void_ty, m_ptr, m_ptr);
    m_entry = m.getOrInsertFunction("__tsan_func_entry", void_ty, m_ptr);
    MDBuilder md(m_ctx);
    MDNode* domain = md.createAnonymousAliasScopeDomain("smtrace");
    m_scope = MDNode::get(m_ctx, {md.createAnonymousAliasScope(domain, "smtrace.hull")});
    m_exit = m.getOrInsertFunction("__tsan_func_exit", void_ty);
  }

  // Instrument `f`; return true when it changed.
  bool run(Function& f) {
    f.removeFnAttr(Attribute::SanitizeThread);  // MarkPass's; the optimizer is done
    if (f.isDeclaration() || f.hasFnAttribute(Attribute::Naked) ||
        f.hasFnAttribute(Attribute::DisableSanitizerInstrumentation) || f.getName().startswith("__tsan_"))
      return false;
    SmallVector<Access, 32> accesses;
    m_escapes.clear();
    bool calls = false;
    for (BasicBlock& bb : f)
      for (Instruction& i : bb) {
        if (auto* call = dyn_cast<CallBase>(&i)) {
          calls = calls || !isa<IntrinsicInst>(call) || isa<MemIntrinsic>(call);
          memory_call(*call, accesses);
        } else {
          plain_access(i, accesses);
        }
      }
    for (const Access& a : accesses) instrument(a);
    if (accesses.empty() && !calls) return false;
    shadow_frame(f);
    return true;
  }

 private:
  // Return true when an access through `addr` may touch memory MPI was given.
  bool may_be_watched(Value* addr, bool store) {
    if (addr->getType()->getPointerAddressSpace() != 0) return false;
    const Value* object = getUnderlyingObject(addr);
    if (const auto* g = dyn_cast<GlobalVariable>(object)) {
      if (!store && g->isConstant()) return false;
      if (g->getName().startswith("__llvm") || g == m_hull->stripPointerCasts()) return false;
    }
    // A stack slot whose address never escapes was never handed to MPI.
    if (isa<AllocaInst>(object)) {
      auto [it, fresh] = m_escapes.try_emplace(object, true);
      if (fresh) it->second = PointerMayBeCaptured(object, true, true, k_max_uses);
      return it->second;
    }
    return true;
  }

  void plain_access(Instruction& i, SmallVectorImpl<Access>& out) {
    Access a{&i, nullptr};
    Type* type = nullptr;
    if (auto* load = dyn_cast<LoadInst>(&i)) {
      a.addr = load->getPointerOperand();
      type = load->getType();
    } else if (auto* store = dyn_cast<StoreInst>(&i)) {
      a.addr = store->getPointerOperand();
      type = store->getValueOperand()->getType();
      a.store = true;
      a.stored = store->getValueOperand();
    } else if (auto* rmw = dyn_cast<AtomicRMWInst>(&i)) {
      a.addr = rmw->getPointerOperand();
      type = rmw->getValOperand()->getType();
      a.store = true;
    } else if (auto* cas = dyn_cast<AtomicCmpXchgInst>(&i)) {
      a.addr = cas->getPointerOperand();
      type = cas->getNewValOperand()->getType();
      a.store = true;
    } else {
      return;
    }
    if (isa<ScalableVectorType>(type) || !type->isSized()) return;
    if (auto* load = dyn_cast<LoadInst>(&i); load && load->isSwiftError()) return;
    a.bytes = m_layout.getTypeStoreSize(type).getFixedSize();
    if (a.bytes == 0 || !may_be_watched(a.addr, a.store)) return;
    if (const MDNode* tbaa = i.getMetadata(LLVMContext::MD_tbaa); tbaa && tbaa->isTBAAVtableAccess())
      a.vptr = a.bytes == m_layout.getPointerSize();
    if (!a.vptr) a.stored = nullptr;
    out.push_back(a);
  }

  void memory_call(CallBase& call, SmallVectorImpl<Access>& out) {
    Value *dst = nullptr, *src = nullptr, *size = nullptr;
    if (auto* mem = dyn_cast<MemIntrinsic>(&call)) {
      dst = mem->getRawDest();
      size = mem->getLength();
      if (auto* transfer = dyn_cast<MemTransferInst>(mem)) src = transfer->getRawSource();
    } else if (const Function* callee = call.getCalledFunction(); callee && call.arg_size() >= 3) {
      // Direct calls (-fno-builtin): the runtime's interposed functions record
      // only calls from modules that called __tsan_init, which these never do.
      const StringRef name = callee->getName();
      const bool copy = name == "memcpy" || name == "memmove" || name == "__memcpy_chk" || name == "__memmove_chk";
      if (!copy && name != "memset" && name != "__memset_chk") return;
      dst = call.getArgOperand(0);
      if (copy) src = call.getArgOperand(1);
      size = call.getArgOperand(2);
      if (!dst->getType()->isPointerTy() || (src && !src->getType()->isPointerTy()) || !size->getType()->isIntegerTy())
        return;
    } else {
      return;
    }
    // Loads first, as the runtime's memcpy records them.
    if (src && may_be_watched(src, false)) out.push_back(sized(call, src, size, false));
    if (may_be_watched(dst, true)) out.push_back(sized(call, dst, size, true));
  }

  Access sized(Instruction& at, Value* addr, Value* size, bool store) const {
    Access a{&at, addr};
    a.store = store;
    if (auto* c = dyn_cast<ConstantInt>(size)) a.bytes = c->getZExtValue();
    else a.size = size;
    return a;
  }

  void instrument(const Access& a) {
    if (!a.size && a.bytes == 0) return;
    IRBuilder<> b(a.at);
    Value* addr = b.CreatePtrToInt(a.addr, m_intptr);
    Value* lo_p = b.CreateStructGEP(m_hull_type, m_hull, 0);
    Value* hi_p = b.CreateStructGEP(m_hull_type, m_hull, 1);
    LoadInst* lo = b.CreateAlignedLoad(m_intptr, lo_p, m_layout.getABITypeAlign(m_intptr), "smtrace.lo");
    LoadInst* hi = b.CreateAlignedLoad(m_intptr, hi_p, m_layout.getABITypeAlign(m_intptr), "smtrace.hi");
    lo->setAtomic(AtomicOrdering::Unordered);
    hi->setAtomic(AtomicOrdering::Unordered);
    // The program never touches the hull: say so, so that its stores (say,
    // through a pointer argument) do not keep the hull's loads in the loop.
    lo->setMetadata(LLVMContext::MD_alias_scope, m_scope);
    hi->setMetadata(LLVMContext::MD_alias_scope, m_scope);
    a.at->setMetadata(LLVMContext::MD_noalias,
                      MDNode::concatenate(a.at->getMetadata(LLVMContext::MD_noalias), m_scope));
    Value* hit = nullptr;
    Value* size = a.size ? b.CreateZExtOrTrunc(a.size, m_intptr) : ConstantInt::get(m_intptr, a.bytes);
    if (a.size) {
      Value* nonempty = b.CreateICmpNE(size, ConstantInt::get(m_intptr, 0));
      Value* below = b.CreateICmpULT(addr, hi);
      Value* first = b.CreateAdd(lo, ConstantInt::get(m_intptr, k_small - 1));
      Value* above = b.CreateICmpUGT(b.CreateAdd(addr, size), first);
      hit = b.CreateAnd(nonempty, b.CreateAnd(below, above));
    } else {
      Constant* off = ConstantInt::get(m_intptr, a.bytes > k_small ? a.bytes - k_small : 0);
      Value* span = b.CreateAdd(b.CreateSub(hi, lo), off);
      hit = b.CreateICmpULT(b.CreateSub(b.CreateAdd(addr, off), lo), span, "smtrace.hit");
    }
    MDNode* weights = MDBuilder(m_ctx).createBranchWeights(1, 1 << 20);
    Instruction* then = SplitBlockAndInsertIfThen(hit, a.at, false, weights);
    IRBuilder<> c(then);
    c.SetCurrentDebugLocation(a.at->getDebugLoc());
    Value* p = c.CreatePointerCast(a.addr, m_ptr);
    CallInst* call = nullptr;
    if (a.vptr && a.store && a.stored) {
      call = c.CreateCall(m_vptr_update, {p, c.CreatePointerCast(a.stored, m_ptr)});
    } else if (a.vptr && !a.store) {
      call = c.CreateCall(m_vptr_read, {p});
    } else if (!a.size && a.bytes <= k_small && isPowerOf2_64(a.bytes)) {
      const unsigned index = Log2_64(a.bytes);
      call = c.CreateCall(a.store ? m_write[index] : m_read[index], {p});
    } else {
      call = c.CreateCall(a.store ? m_write_range : m_read_range, {p, size});
    }
    call->setDebugLoc(a.at->getDebugLoc());
  }

  // __tsan_func_entry(return address) on entry, __tsan_func_exit on every
  // way out (returns, and unwinding through cleanup pads).
  void shadow_frame(Function& f) {
    IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
    Function* ra = Intrinsic::getDeclaration(&m_module, Intrinsic::returnaddress);
    Value* pc = b.CreateCall(ra, b.getInt32(0));
    b.CreateCall(m_entry, {b.CreatePointerCast(pc, m_ptr)});
    EscapeEnumerator escapes(f, "smtrace_cleanup", true);
    while (IRBuilder<>* at = escapes.Next()) at->CreateCall(m_exit, {});
  }

  Module& m_module;
  LLVMContext& m_ctx;
  const DataLayout& m_layout;
  IntegerType* m_intptr = nullptr;
  PointerType* m_ptr = nullptr;
  // Whether a stack slot's address escapes, per function (uses past
  // k_max_uses count as an escape).
  static constexpr unsigned k_max_uses = 4096;
  DenseMap<const Value*, bool> m_escapes;
  StructType* m_hull_type = nullptr;
  Constant* m_hull = nullptr;
  MDNode* m_scope = nullptr;  // the hull's alias scope (list of one)  // the global, or a cast of it to m_hull_type*
  FunctionCallee m_read[5], m_write[5], m_read_range, m_write_range, m_vptr_read, m_vptr_update, m_entry, m_exit;
};

struct InstrumentPass : PassInfoMixin<InstrumentPass> {
  PreservedAnalyses run(Module& m, ModuleAnalysisManager&) {
    Instrumenter instrumenter(m);
    bool changed = false;
    for (Function& f : m)
      if (!f.isDeclaration()) changed = instrumenter.run(f) || changed;
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

void register_passes(PassBuilder& pb) {
  pb.registerPipelineStartEPCallback([](ModulePassManager& mpm, OptimizationLevel) { mpm.addPass(MarkPass()); });
  pb.registerOptimizerLastEPCallback([](ModulePassManager& mpm, OptimizationLevel level) {
    mpm.addPass(InstrumentPass());
    if (level == OptimizationLevel::O0) return;
    FunctionPassManager fpm;
    fpm.addPass(EarlyCSEPass(true));
    fpm.addPass(createFunctionToLoopPassAdaptor(LICMPass(), true));
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(fpm)));
  });
}

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK __attribute__((visibility("default"))) PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "smtrace-filter", "0.1", register_passes};
}
