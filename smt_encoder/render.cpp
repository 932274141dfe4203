// Rendering a ProveResult: text (check's diagnostics, then the questions),
// JSON (the shape at the top of prove.hpp) and Graphviz (Boost.Graph's
// write_graphviz) for the first witness.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphviz.hpp>
#include <fmt/core.h>

#include "analyzer/report.hpp"
#include "smt_encoder/prove.hpp"

namespace smtrace::smt {

namespace {

using analyzer::json_quote;

std::string q(std::string_view text) { return json_quote(text); }

std::string ref_or_empty(const analyzer::EventRef& ref, bool set) { return q(set ? ref.str() : std::string()); }

void write_witness_json(analyzer::ReportSink& out, const std::optional<Witness>& w, std::string_view indent) {
  if (!w) {
    out += "null";
    return;
  }
  out.format("{{\"outcome\": {}, \"replayed\": {},\n{} \"schedule\": [", q(outcome_name(w->outcome)),
             w->replayed ? "true" : "false", indent);
  for (std::size_t i = 0; i < w->schedule.size(); ++i) {
    const Step& s = w->schedule[i];
    const bool match = s.action == StepAction::match;
    out.format(
        "{}\n{}   {{\"step\": {}, \"action\": {}, \"event\": {}, \"rank\": {}, \"seq\": {}, \"call\": {}, "
        "\"receive\": {}, \"send\": {}}}",
        i ? "," : "", indent, i, q(step_action_name(s.action)), q(s.event.str()), s.event.rank, s.event.seq,
        q(s.call), ref_or_empty(s.receive, match), ref_or_empty(s.send, match));
  }
  out.format("],\n{} \"matches\": [", indent);
  for (std::size_t i = 0; i < w->matches.size(); ++i) {
    out.format("{}{{\"receive\": {}, \"send\": {}}}", i ? ", " : "", q(w->matches[i].receive.str()),
               q(w->matches[i].send.str()));
  }
  out.format("],\n{} \"cycle\": [", indent);
  for (std::size_t i = 0; i < w->cycle.size(); ++i) {
    const Blocked& b = w->cycle[i];
    std::string waits;
    for (std::size_t j = 0; j < b.waits_for.size(); ++j) waits += (j ? ", " : "") + std::to_string(b.waits_for[j]);
    out.format("{}{{\"rank\": {}, \"event\": {}, \"call\": {}, \"waits_for\": [{}]}}", i ? ", " : "", b.event.rank,
               q(b.event.str()), q(b.call), waits);
  }
  out.format("],\n{} \"omitted_steps\": {}}}", indent, w->omitted);
}

void write_location_json(analyzer::ReportSink& out, const analyzer::Location& l) {
  out.format(
      "{{\"rank\": {}, \"event\": {}, \"seq\": {}, \"call\": {}, \"function\": {}, \"file\": {}, \"line\": {}, "
      "\"column\": {}, \"note\": {}}}",
      l.event.rank, q(l.event.str()), l.event.seq, q(l.call), q(l.function), q(l.file), l.line, l.column,
      q(l.note));
}

std::string strings_json(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + q(v[i]);
  return out + "]";
}

analyzer::Result as_check_result(const ProveResult& result) {
  analyzer::Result r;
  for (const ProveFinding& f : result.findings) r.findings.push_back(f.finding);
  r.stats = result.stats;
  r.world_size = result.world_size;
  r.complete = result.complete;
  return r;
}

std::string step_text(const Step& s) {
  if (s.action == StepAction::match) return fmt::format("match: {} takes {}", s.receive.str(), s.send.str());
  return fmt::format("{} {} {}", step_action_name(s.action), s.event.str(), s.call);
}

}  // namespace

void write_text(std::ostream& stream, const ProveResult& result) {
  const analyzer::Result check = as_check_result(result);
  analyzer::write_diagnostics(stream, check);  // the SUMMARY line goes last
  analyzer::ReportSink out(stream);
  for (const Answer& a : result.answers) {
    out.format("{} {} {}: {}\n", question_name(a.question.kind), a.question.a.str(), a.question.b.str(),
               verdict_name(a.verdict));
    if (a.witness) {
      out.format("  witness ({} steps, replayed):\n", a.witness->schedule.size());
      for (std::size_t i = 0; i < a.witness->schedule.size(); ++i) {
        out.format("  {:>4}. {}\n", i, step_text(a.witness->schedule[i]));
      }
    }
    for (const std::string& line : a.explanation) out.format("  because: {}\n", line);
    if (a.verdict == Verdict::unknown) out.format("  unknown: {} (not a proof either way)\n", a.reason);
  }
  if (result.unknown) {
    out.format("smtrace: note: {} question{} undecided within --smt-timeout {} s (unknown, not a proof)\n",
               result.unknown, result.unknown == 1 ? "" : "s", result.smt_timeout_s);
  }
  for (const std::string& why : result.undecided) out.format("smtrace: note: undecided: {}\n", why);
  out += analyzer::summary_line(check);
  out += '\n';
}

std::string render_text(const ProveResult& result) {
  std::ostringstream out;
  write_text(out, result);
  return std::move(out).str();
}

void write_json(std::ostream& stream, const ProveResult& result) {
  const analyzer::Counts counts = analyzer::count_findings(as_check_result(result));
  analyzer::ReportSink out(stream);
  out += "{\n";
  out.format("  \"schema\": \"smtrace-prove\", \"format_version\": 1,\n");
  out.format("  \"tool\": {{\"name\": \"smtrace\", \"version\": {}}},\n", q(SMTRACE_VERSION));
  out.format("  \"trace\": {}, \"ranks\": {}, \"complete\": {},\n", q(result.trace), result.world_size,
             result.complete ? "true" : "false");
  out.format("  \"buffering\": {}, \"smt_timeout_s\": {},\n", q(buffering_name(result.buffering)),
             result.smt_timeout_s);
  out.format("  \"summary\": {{\"errors\": {}, \"warnings\": {}, \"infos\": {}, \"unknown\": {}}},\n",
             counts.errors, counts.warnings, counts.infos, result.unknown);
  out += "  \"findings\": [";
  for (std::size_t i = 0; i < result.findings.size(); ++i) {
    const ProveFinding& f = result.findings[i];
    out.format("{}\n    {{\"kind\": {}, \"severity\": {}, \"message\": {},\n     \"locations\": [", i ? "," : "",
               q(f.finding.kind), q(analyzer::severity_name(f.finding.severity)), q(f.finding.message));
    for (std::size_t j = 0; j < f.finding.locations.size(); ++j) {
      if (j) out += ",\n       ";
      write_location_json(out, f.finding.locations[j]);
    }
    out.format("],\n     \"notes\": {},\n     \"verdict\": {}, \"witness\": ", strings_json(f.finding.notes),
               q(verdict_name(f.verdict)));
    write_witness_json(out, f.witness, "     ");
    out += '}';
  }
  out += result.findings.empty() ? "],\n" : "\n  ],\n";
  out += "  \"questions\": [";
  for (std::size_t i = 0; i < result.answers.size(); ++i) {
    const Answer& a = result.answers[i];
    out.format("{}\n    {{\"question\": {}, \"events\": [{}, {}], \"verdict\": {},\n     \"witness\": ", i ? "," : "",
               q(question_name(a.question.kind)), q(a.question.a.str()), q(a.question.b.str()),
               q(verdict_name(a.verdict)));
    write_witness_json(out, a.witness, "     ");
    out.format(",\n     \"explanation\": {}, \"reason\": {}}}", strings_json(a.explanation), q(a.reason));
  }
  out += result.answers.empty() ? "],\n" : "\n  ],\n";
  out += "  \"races\": [";
  for (std::size_t i = 0; i < result.races.size(); ++i) {
    const Race& r = result.races[i];
    out.format("{}\n    {{\"receive\": {}, \"recorded\": {}, \"alternatives\": [", i ? "," : "", q(r.receive.str()),
               q(r.recorded ? r.recorded->str() : std::string()));
    for (std::size_t j = 0; j < r.alternatives.size(); ++j) {
      const Race::Alternative& a = r.alternatives[j];
      const std::string_view outcome = a.verdict != Verdict::sat ? std::string_view() : a.outcome_known ? outcome_name(a.outcome) : std::string_view("unknown");
      out.format("{}{{\"send\": {}, \"verdict\": {}, \"outcome\": {}, \"alone\": {}}}", j ? ", " : "",
                 q(a.send.str()), q(verdict_name(a.verdict)), q(outcome), a.alone ? "true" : "false");
    }
    out += "]}";
  }
  out += result.races.empty() ? "],\n" : "\n  ],\n";
  out.format("  \"undecided\": {},\n", strings_json(result.undecided));
  out += "  \"stats\": {";
  std::size_t n = 0;
  for (const auto& [key, value] : result.stats) out.format("{}{}: {}", n++ ? ", " : "", q(key), value);
  out += "}\n}\n";
}

std::string render_json(const ProveResult& result) {
  std::ostringstream out;
  write_json(out, result);
  return std::move(out).str();
}

namespace {

struct DotVertex {
  std::string label;
  std::string shape;
};
struct DotEdge {
  std::string label;
  std::string style;
  std::string color;
};
using DotGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, DotVertex, DotEdge>;

// Return `text` as a Graphviz quoted string.
std::string dot_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const Witness* first_witness(const ProveResult& result) {
  for (const Answer& a : result.answers) {
    if (a.witness) return &*a.witness;
  }
  for (const ProveFinding& f : result.findings) {
    if (f.witness) return &*f.witness;
  }
  return nullptr;
}

}  // namespace

std::string render_dot(const ProveResult& result) {
  DotGraph g;
  std::map<analyzer::EventRef, DotGraph::vertex_descriptor> vertex;
  std::map<uint32_t, DotGraph::vertex_descriptor> last_of_rank;
  const Witness* w = first_witness(result);
  auto node = [&](const analyzer::EventRef& ref, const std::string& call) {
    auto it = vertex.find(ref);
    if (it != vertex.end()) return it->second;
    const auto v = boost::add_vertex(DotVertex{ref.str() + " " + call, "box"}, g);
    vertex.emplace(ref, v);
    if (auto last = last_of_rank.find(ref.rank); last != last_of_rank.end()) {
      boost::add_edge(last->second, v, DotEdge{"", "solid", "gray40"}, g);
    }
    last_of_rank[ref.rank] = v;
    return v;
  };
  if (w) {
    for (const Step& s : w->schedule) {
      if (s.action == StepAction::call || s.action == StepAction::blocked) node(s.event, s.call);
    }
    for (const MatchRef& m : w->matches) {
      auto from = vertex.find(m.send), to = vertex.find(m.receive);
      if (from == vertex.end() || to == vertex.end()) continue;
      boost::add_edge(from->second, to->second, DotEdge{m.probe ? "seen by" : "match", "dashed", "blue"}, g);
    }
    std::map<uint32_t, analyzer::EventRef> blocked_at;
    for (const Blocked& b : w->cycle) blocked_at[b.event.rank] = b.event;
    for (const Blocked& b : w->cycle) {
      g[vertex.at(b.event)].shape = "octagon";
      for (uint32_t r : b.waits_for) {
        auto other = blocked_at.find(r);
        if (other == blocked_at.end()) continue;
        boost::add_edge(vertex.at(b.event), vertex.at(other->second), DotEdge{"waits for", "bold", "red"}, g);
      }
    }
  }
  std::ostringstream out;
  boost::write_graphviz(
      out, g,
      [&](std::ostream& os, DotGraph::vertex_descriptor v) {
        os << "[label=" << dot_quote(g[v].label) << ", shape=" << g[v].shape << "]";
      },
      [&](std::ostream& os, DotGraph::edge_descriptor e) {
        os << "[label=" << dot_quote(g[e].label) << ", style=" << g[e].style << ", color=" << g[e].color << "]";
      },
      [&](std::ostream& os) {
        os << "label=" << dot_quote(w ? fmt::format("smtrace prove {}: {} witness", result.trace, outcome_name(w->outcome))
                                      : fmt::format("smtrace prove {}: no witness", result.trace))
           << ";\nrankdir=TB;\n";
      });
  return out.str();
}

}  // namespace smtrace::smt
