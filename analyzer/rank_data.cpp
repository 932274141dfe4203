#include "analyzer/rank_data.hpp"

namespace smtrace::analyzer {

const format::CallSite* RankData::site(uint32_t id) const {
  auto it = sites.find(id);
  return it == sites.end() ? nullptr : &it->second;
}

const format::CommDef* RankData::comm(uint32_t id) const {
  auto it = comms.find(id);
  return it == comms.end() ? nullptr : &it->second;
}

const format::DatatypeDef* RankData::datatype(uint32_t id) const {
  auto it = datatypes.find(id);
  return it == datatypes.end() ? nullptr : &it->second;
}

}  // namespace smtrace::analyzer
