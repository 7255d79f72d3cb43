// Layout: the /structure and /classes tables declared in include/ascprof/schema/rank_tables.hpp.
#include "structure_store.hpp"

#include <string>
#include <vector>

#include "ascprof/schema/rank_tables.hpp"
#include "ascprof/store/h5_reader.hpp"

namespace ascprof::pipeline {

namespace {

// "row 3": a place in an error message.
std::string at(const char* what, size_t i) { return std::string(what) + " " + std::to_string(i); }

Result<std::vector<int32_t>> read_class_index(const store::H5Reader& r, const std::string& dataset) {
  if (r.kind(dataset) != store::ObjectKind::kDataset)
    return file_error(ErrorCode::kSchema, r.path().string(), dataset, "missing dataset");
  return r.read_column<int32_t>(dataset);
}

}  // namespace

std::string structure_inconsistency(const model::RankStructure& s, const model::RankClasses& c) {
  const size_t nseg = s.segments.size(), nlay = s.layers.size(), nblk = c.blocks.size();
  for (size_t i = 0; i < nseg; ++i) {
    const auto& g = s.segments[i];
    if (uint64_t{g.first_layer} + g.layer_count > nlay)
      return at("segment", i) + ": layers " + std::to_string(g.first_layer) + "+" + std::to_string(g.layer_count) +
             " exceed the " + std::to_string(nlay) + " layers";
  }
  for (size_t i = 0; i < nlay; ++i) {
    if (s.layers[i].segment >= nseg)
      return at("layer", i) + ": segment " + std::to_string(s.layers[i].segment) + " out of range";
    if (s.layers[i].signature >= s.layer_signatures.size())
      return at("layer", i) + ": signature " + std::to_string(s.layers[i].signature) + " out of range";
  }
  for (size_t i = 0; i < s.observations.size(); ++i)
    if (s.observations[i].segment >= nseg) return at("observation", i) + ": segment out of range";
  for (size_t i = 0; i < s.role_observations.size(); ++i)
    if (s.role_observations[i].segment >= nseg) return at("role observation", i) + ": segment out of range";
  for (size_t i = 0; i < s.hard_errors.size(); ++i) {
    const int32_t g = s.hard_errors[i].segment;
    if (g < -1 || (g >= 0 && static_cast<size_t>(g) >= nseg))
      return at("hard error", i) + ": segment " + std::to_string(g) + " out of range";
  }
  for (size_t i = 0; i < nblk; ++i) {
    if (c.blocks[i].layer >= nlay) return at("block", i) + ": layer out of range";
    if (c.blocks[i].block_class >= c.block_classes.size()) return at("block", i) + ": block class out of range";
  }
  auto check_members = [](const std::vector<model::ShapeClass>& cls, size_t n, const char* scope) -> std::string {
    for (size_t i = 0; i < cls.size(); ++i)
      for (uint32_t m : cls[i].members)
        if (m >= n) return std::string(scope) + " class " + std::to_string(i) + ": member " + std::to_string(m) + " out of range";
    return "";
  };
  if (auto e = check_members(c.block_classes, nblk, "block"); !e.empty()) return e;
  if (auto e = check_members(c.layer_classes, nlay, "layer"); !e.empty()) return e;
  if (auto e = check_members(c.step_classes, nseg, "step"); !e.empty()) return e;
  const bool classified = !c.layer_class.empty() || !c.step_class.empty();
  if (classified && (c.layer_class.size() != nlay || c.step_class.size() != nseg))
    return "layer_class has " + std::to_string(c.layer_class.size()) + " entries for " + std::to_string(nlay) +
           " layers, step_class " + std::to_string(c.step_class.size()) + " for " + std::to_string(nseg) + " segments";
  for (size_t i = 0; i < c.layer_class.size(); ++i)
    if (c.layer_class[i] < -1 || (c.layer_class[i] >= 0 && static_cast<size_t>(c.layer_class[i]) >= c.layer_classes.size()))
      return at("layer_class", i) + " out of range";
  for (size_t i = 0; i < c.step_class.size(); ++i)
    if (c.step_class[i] < -1 || (c.step_class[i] >= 0 && static_cast<size_t>(c.step_class[i]) >= c.step_classes.size()))
      return at("step_class", i) + " out of range";
  return "";
}

Status write_segment_tables(store::H5Writer& w, const model::RankStructure& s) {
  if (auto e = structure_inconsistency(s, model::RankClasses{}); !e.empty())
    return file_error(ErrorCode::kInternal, w.path().string(), "/structure", "inconsistent structure: " + e);
  ASCPROF_RETURN_IF_ERROR(w.create_group("/structure"));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/structure", "rank_id", s.rank_id));
  ASCPROF_RETURN_IF_ERROR(w.set_uint_attr("/structure", "event_count", s.event_count));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/structure", "step_source", model::step_source_name(s.step_source)));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/structure", "anchor_family", s.anchor_family));
  return schema::write_tables(w, s, schema::kStructureTables);
}

Status write_class_tables(store::H5Writer& w, const model::RankStructure& s, const model::RankClasses& c) {
  if (auto e = structure_inconsistency(s, c); !e.empty())
    return file_error(ErrorCode::kInternal, w.path().string(), "/classes", "inconsistent classes: " + e);
  ASCPROF_RETURN_IF_ERROR(w.create_group("/classes"));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/classes", "rank_id", s.rank_id));
  ASCPROF_RETURN_IF_ERROR(schema::write_tables(w, c, schema::kClassTables));
  ASCPROF_RETURN_IF_ERROR(w.write_column("/classes/layer_class", c.layer_class));
  return w.write_column("/classes/step_class", c.step_class);
}

Status write_structure_tables(store::H5Writer& w, const model::RankStructure& s, const model::RankClasses& c) {
  ASCPROF_RETURN_IF_ERROR(write_segment_tables(w, s));
  return write_class_tables(w, s, c);
}

Result<StoredStructure> read_structure_tables(const std::string& h5_path) {
  ASCPROF_ASSIGN_OR_RETURN(store::H5Reader r, store::H5Reader::open(h5_path));
  if (r.kind("/structure") != store::ObjectKind::kGroup)
    return file_error(ErrorCode::kSchema, h5_path, "/structure", "missing group (segment stage not written)");
  StoredStructure out;
  model::RankStructure& s = out.structure;
  {
    ASCPROF_ASSIGN_OR_RETURN(s.rank_id, r.string_attr("/structure", "rank_id"));
    ASCPROF_ASSIGN_OR_RETURN(s.event_count, r.uint_attr("/structure", "event_count"));
    ASCPROF_ASSIGN_OR_RETURN(std::string src, r.string_attr("/structure", "step_source"));
    if (!schema::parse_name(schema::kStepSourceNames, src, &s.step_source))
      return file_error(ErrorCode::kSchema, h5_path, "/structure@step_source", "unknown value '" + src + "'");
    ASCPROF_ASSIGN_OR_RETURN(s.anchor_family, r.string_attr("/structure", "anchor_family"));
  }
  ASCPROF_RETURN_IF_ERROR(schema::read_tables(r, s, schema::kStructureTables));
  if (auto e = structure_inconsistency(s, model::RankClasses{}); !e.empty())
    return file_error(ErrorCode::kSchema, h5_path, "/structure", "inconsistent tables: " + e);

  if (r.kind("/classes") != store::ObjectKind::kGroup) return out;
  out.has_classes = true;
  model::RankClasses& c = out.classes;
  ASCPROF_RETURN_IF_ERROR(schema::read_tables(r, c, schema::kClassTables));
  ASCPROF_ASSIGN_OR_RETURN(c.layer_class, read_class_index(r, "/classes/layer_class"));
  ASCPROF_ASSIGN_OR_RETURN(c.step_class, read_class_index(r, "/classes/step_class"));
  if (auto e = structure_inconsistency(s, c); !e.empty())
    return file_error(ErrorCode::kSchema, h5_path, "/classes", "inconsistent tables: " + e);
  return out;
}

}  // namespace ascprof::pipeline
