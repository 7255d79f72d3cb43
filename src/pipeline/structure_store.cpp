// Layout documented in structure_store.hpp.
#include "structure_store.hpp"
#include "column_tables.hpp"

#include <simdjson.h>

#include <string_view>
#include <vector>

#include "ascprof/common/json_writer.hpp"
#include "ascprof/store/h5_reader.hpp"

namespace ascprof::pipeline {

namespace {

using model::BlockKind;
using model::LayerRole;
using model::SegmentType;
using model::StepSource;

constexpr int kSegmentTypes = 7, kLayerRoles = 4, kStepSources = 3, kBlockKinds = 5, kBoundarySources = 3;

// ---- writing ------------------------------------------------------------------------------------

Status write_class_table(store::H5Writer& w, const std::string& group, const std::vector<model::ShapeClass>& cls) {
  const size_t n = cls.size();
  std::vector<std::string> id(n), sig(n), label(n), members(n), kind(n), kinds(n), children(n), family(n);
  std::vector<uint8_t> unknown(n), companion(n);
  std::vector<uint32_t> pairs(n), main(n), layers(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& c = cls[i];
    id[i] = c.class_id;
    sig[i] = c.structure_signature;
    label[i] = c.scope_label;
    unknown[i] = c.has_unknown_shape ? 1 : 0;
    pairs[i] = c.shape_pairs_count;
    members[i] = json_indices(c.members);
    kind[i] = model::block_kind_name(c.block_kind);
    companion[i] = c.companion_layer ? 1 : 0;
    kinds[i] = json_strings(c.block_kinds);
    children[i] = json_strings(c.child_class_ids);
    main[i] = c.main_layer_count;
    layers[i] = c.layer_count;
    family[i] = c.step_family;
  }
  store::TableWriter t(w, group, n);
  t.string_column("class_id", id);
  t.string_column("structure_signature", sig);
  t.string_column("scope_label", label);
  t.column("has_unknown_shape", unknown);
  t.column("shape_pairs_count", pairs);
  t.string_column("members", members);
  t.string_column("block_kind", kind);
  t.column("companion_layer", companion);
  t.string_column("block_kinds", kinds);
  t.string_column("child_class_ids", children);
  t.column("main_layer_count", main);
  t.column("layer_count", layers);
  t.string_column("step_family", family);
  return t.finish();
}

// ---- reading ------------------------------------------------------------------------------------

Status read_classes(const store::H5Reader& r, const std::string& group, std::vector<model::ShapeClass>* out) {
  TableReader t(r, group);
  auto id = t.str("class_id");
  auto sig = t.str("structure_signature");
  auto label = t.str("scope_label");
  auto unknown = t.num<uint8_t>("has_unknown_shape");
  auto pairs = t.num<uint32_t>("shape_pairs_count");
  auto members = t.index_lists("members");
  auto kind = t.enums<BlockKind>("block_kind", model::block_kind_name, kBlockKinds);
  auto companion = t.num<uint8_t>("companion_layer");
  auto kinds = t.str_lists("block_kinds");
  auto children = t.str_lists("child_class_ids");
  auto main = t.num<uint32_t>("main_layer_count");
  auto layers = t.num<uint32_t>("layer_count");
  auto family = t.str("step_family");
  if (!t.ok()) return t.status();
  out->resize(t.rows());
  for (size_t i = 0; i < t.rows(); ++i) {
    auto& c = (*out)[i];
    c.class_id = std::move(id[i]);
    c.structure_signature = std::move(sig[i]);
    c.scope_label = std::move(label[i]);
    c.has_unknown_shape = unknown[i] != 0;
    c.shape_pairs_count = pairs[i];
    c.members = std::move(members[i]);
    c.block_kind = kind[i];
    c.companion_layer = companion[i] != 0;
    c.block_kinds = std::move(kinds[i]);
    c.child_class_ids = std::move(children[i]);
    c.main_layer_count = main[i];
    c.layer_count = layers[i];
    c.step_family = std::move(family[i]);
  }
  return {};
}

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
  {
    const size_t n = s.segments.size();
    std::vector<std::string> id(n), type(n), family(n), sig(n), cluster(n), source(n), phase(n), reasons(n), tags(n),
        selection(n);
    std::vector<uint8_t> complete(n);
    std::vector<uint32_t> rs(n), re(n), main(n), spec(n), first(n), count(n), micro(n);
    std::vector<int64_t> start(n), end(n), declared(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& g = s.segments[i];
      id[i] = g.segment_id;
      type[i] = model::segment_type_name(g.type);
      complete[i] = g.complete ? 1 : 0;
      rs[i] = g.row_start;
      re[i] = g.row_end;
      start[i] = g.start_ns;
      end[i] = g.end_ns;
      family[i] = g.step_family;
      main[i] = g.main_layer_count;
      spec[i] = g.speculative_layer_count;
      sig[i] = g.structure_signature;
      cluster[i] = g.cluster_id;
      first[i] = g.first_layer;
      count[i] = g.layer_count;
      source[i] = model::step_source_name(g.source);
      declared[i] = g.declared_step;
      phase[i] = g.phase;
      micro[i] = g.microbatch_count;
      reasons[i] = json_strings(g.frame_reasons);
      tags[i] = json_strings(g.frame_tags);
      selection[i] = json_indices(g.selection_rows);
    }
    store::TableWriter t(w, "/structure/segments", n);
    t.string_column("segment_id", id);
    t.string_column("segment_type", type);
    t.column("complete", complete);
    t.column("row_start", rs);
    t.column("row_end", re);
    t.column("start_ns", start);
    t.column("end_ns", end);
    t.string_column("step_family", family);
    t.column("main_layer_count", main);
    t.column("speculative_layer_count", spec);
    t.string_column("structure_signature", sig);
    t.string_column("cluster_id", cluster);
    t.column("first_layer", first);
    t.column("layer_count", count);
    t.string_column("step_source", source);
    t.column("declared_step", declared);
    t.string_column("phase", phase);
    t.column("microbatch_count", micro);
    t.string_column("frame_reasons", reasons);
    t.string_column("frame_tags", tags);
    t.string_column("selection_rows", selection);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const size_t n = s.layers.size();
    std::vector<std::string> id(n), role(n), bsrc(n);
    std::vector<uint32_t> seg(n), idx(n), rs(n), re(n), anchor(n), sig(n);
    std::vector<int64_t> start(n), end(n);
    std::vector<int32_t> micro(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& l = s.layers[i];
      id[i] = l.layer_id;
      seg[i] = l.segment;
      idx[i] = l.layer_index;
      rs[i] = l.row_start;
      re[i] = l.row_end;
      start[i] = l.start_ns;
      end[i] = l.end_ns;
      anchor[i] = l.first_anchor_row;
      role[i] = model::layer_role_name(l.role);
      micro[i] = l.microbatch;
      bsrc[i] = model::boundary_source_name(l.boundary_source);
      sig[i] = l.signature;
    }
    {
      store::TableWriter sigs(w, "/structure/layer_signatures", s.layer_signatures.size());
      sigs.string_column("signature", s.layer_signatures);
      ASCPROF_RETURN_IF_ERROR(sigs.finish());
    }
    store::TableWriter t(w, "/structure/layers", n);
    t.string_column("layer_id", id);
    t.column("segment", seg);
    t.column("layer_index", idx);
    t.column("row_start", rs);
    t.column("row_end", re);
    t.column("start_ns", start);
    t.column("end_ns", end);
    t.column("first_anchor_row", anchor);
    t.string_column("layer_role", role);
    t.column("microbatch", micro);
    t.string_column("boundary_source", bsrc);
    t.column("signature", sig);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const size_t n = s.hard_errors.size();
    std::vector<std::string> type(n), detail(n);
    std::vector<uint32_t> rs(n), re(n);
    std::vector<int32_t> seg(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& h = s.hard_errors[i];
      type[i] = h.error_type;
      rs[i] = h.row_start;
      re[i] = h.row_end;
      seg[i] = h.segment;
      detail[i] = h.detail;
    }
    store::TableWriter t(w, "/structure/hard_errors", n);
    t.string_column("error_type", type);
    t.column("row_start", rs);
    t.column("row_end", re);
    t.column("segment", seg);
    t.string_column("detail", detail);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const size_t n = s.boundary_checks.size();
    std::vector<int64_t> declared(n);
    std::vector<std::string> source(n), note(n);
    std::vector<uint32_t> rs(n), re(n), steps(n);
    std::vector<uint8_t> agrees(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& b = s.boundary_checks[i];
      declared[i] = b.declared_step;
      source[i] = model::step_source_name(b.source);
      rs[i] = b.row_start;
      re[i] = b.row_end;
      steps[i] = b.structural_steps;
      agrees[i] = b.agrees ? 1 : 0;
      note[i] = b.note;
    }
    store::TableWriter t(w, "/structure/boundary_checks", n);
    t.column("declared_step", declared);
    t.string_column("step_source", source);
    t.column("row_start", rs);
    t.column("row_end", re);
    t.column("structural_steps", steps);
    t.column("agrees", agrees);
    t.string_column("note", note);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const size_t n = s.observations.size();
    std::vector<uint32_t> seg(n);
    std::vector<std::string> role(n), names(n);
    for (size_t i = 0; i < n; ++i) {
      seg[i] = s.observations[i].segment;
      role[i] = model::layer_role_name(s.observations[i].role);
      names[i] = json_strings(s.observations[i].implementation_names);
    }
    store::TableWriter t(w, "/structure/observations", n);
    t.column("segment", seg);
    t.string_column("layer_role", role);
    t.string_column("implementation_names", names);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  {
    const size_t n = s.role_observations.size();
    std::vector<uint32_t> seg(n);
    std::vector<std::string> role(n), names(n), rows(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& o = s.role_observations[i];
      seg[i] = o.segment;
      role[i] = o.role;
      names[i] = json_strings(o.implementation_names);
      rows[i] = json_indices(o.rows);
    }
    store::TableWriter t(w, "/structure/role_observations", n);
    t.column("segment", seg);
    t.string_column("role", role);
    t.string_column("implementation_names", names);
    t.string_column("rows", rows);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  return {};
}

Status write_class_tables(store::H5Writer& w, const model::RankStructure& s, const model::RankClasses& c) {
  if (auto e = structure_inconsistency(s, c); !e.empty())
    return file_error(ErrorCode::kInternal, w.path().string(), "/classes", "inconsistent classes: " + e);
  ASCPROF_RETURN_IF_ERROR(w.create_group("/classes"));
  ASCPROF_RETURN_IF_ERROR(w.set_string_attr("/classes", "rank_id", s.rank_id));
  {
    const size_t n = c.blocks.size();
    std::vector<std::string> id(n), kind(n);
    std::vector<uint32_t> layer(n), idx(n), rs(n), re(n), events(n), cls(n);
    std::vector<uint8_t> companion(n);
    std::vector<int64_t> start(n), end(n);
    for (size_t i = 0; i < n; ++i) {
      const auto& b = c.blocks[i];
      id[i] = b.block_id;
      layer[i] = b.layer;
      idx[i] = b.block_index;
      kind[i] = model::block_kind_name(b.kind);
      companion[i] = b.companion_layer ? 1 : 0;
      rs[i] = b.row_start;
      re[i] = b.row_end;
      start[i] = b.start_ns;
      end[i] = b.end_ns;
      events[i] = b.event_count;
      cls[i] = b.block_class;
    }
    store::TableWriter t(w, "/classes/blocks", n);
    t.string_column("block_id", id);
    t.column("layer", layer);
    t.column("block_index", idx);
    t.string_column("block_kind", kind);
    t.column("companion_layer", companion);
    t.column("row_start", rs);
    t.column("row_end", re);
    t.column("start_ns", start);
    t.column("end_ns", end);
    t.column("event_count", events);
    t.column("block_class", cls);
    ASCPROF_RETURN_IF_ERROR(t.finish());
  }
  ASCPROF_RETURN_IF_ERROR(write_class_table(w, "/classes/block_classes", c.block_classes));
  ASCPROF_RETURN_IF_ERROR(write_class_table(w, "/classes/layer_classes", c.layer_classes));
  ASCPROF_RETURN_IF_ERROR(write_class_table(w, "/classes/step_classes", c.step_classes));
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
    if (!parse_enum(src, model::step_source_name, kStepSources, &s.step_source))
      return file_error(ErrorCode::kSchema, h5_path, "/structure@step_source", "unknown value '" + src + "'");
    ASCPROF_ASSIGN_OR_RETURN(s.anchor_family, r.string_attr("/structure", "anchor_family"));
  }
  {
    TableReader t(r, "/structure/segments");
    auto id = t.str("segment_id");
    auto type = t.enums<SegmentType>("segment_type", model::segment_type_name, kSegmentTypes);
    auto complete = t.num<uint8_t>("complete");
    auto rs = t.num<uint32_t>("row_start");
    auto re = t.num<uint32_t>("row_end");
    auto start = t.num<int64_t>("start_ns");
    auto end = t.num<int64_t>("end_ns");
    auto family = t.str("step_family");
    auto main = t.num<uint32_t>("main_layer_count");
    auto spec = t.num<uint32_t>("speculative_layer_count");
    auto sig = t.str("structure_signature");
    auto cluster = t.str("cluster_id");
    auto first = t.num<uint32_t>("first_layer");
    auto count = t.num<uint32_t>("layer_count");
    auto source = t.enums<StepSource>("step_source", model::step_source_name, kStepSources);
    auto declared = t.num<int64_t>("declared_step");
    auto phase = t.str("phase");
    auto micro = t.num<uint32_t>("microbatch_count");
    auto reasons = t.str_lists("frame_reasons");
    auto tags = t.str_lists("frame_tags");
    auto selection = t.index_lists("selection_rows");
    if (!t.ok()) return t.status();
    s.segments.resize(t.rows());
    for (size_t i = 0; i < t.rows(); ++i) {
      auto& g = s.segments[i];
      g.segment_id = std::move(id[i]);
      g.type = type[i];
      g.complete = complete[i] != 0;
      g.row_start = rs[i];
      g.row_end = re[i];
      g.start_ns = start[i];
      g.end_ns = end[i];
      g.step_family = std::move(family[i]);
      g.main_layer_count = main[i];
      g.speculative_layer_count = spec[i];
      g.structure_signature = std::move(sig[i]);
      g.cluster_id = std::move(cluster[i]);
      g.first_layer = first[i];
      g.layer_count = count[i];
      g.source = source[i];
      g.declared_step = declared[i];
      g.phase = std::move(phase[i]);
      g.microbatch_count = micro[i];
      g.frame_reasons = std::move(reasons[i]);
      g.frame_tags = std::move(tags[i]);
      g.selection_rows = std::move(selection[i]);
    }
  }
  {
    TableReader t(r, "/structure/layer_signatures");
    auto sigs = t.str("signature");
    if (!t.ok()) return t.status();
    s.layer_signatures = std::move(sigs);
  }
  {
    TableReader t(r, "/structure/layers");
    auto id = t.str("layer_id");
    auto seg = t.num<uint32_t>("segment");
    auto idx = t.num<uint32_t>("layer_index");
    auto rs = t.num<uint32_t>("row_start");
    auto re = t.num<uint32_t>("row_end");
    auto start = t.num<int64_t>("start_ns");
    auto end = t.num<int64_t>("end_ns");
    auto anchor = t.num<uint32_t>("first_anchor_row");
    auto role = t.enums<LayerRole>("layer_role", model::layer_role_name, kLayerRoles);
    auto micro = t.num<int32_t>("microbatch");
    auto bsrc = t.enums<model::BoundarySource>("boundary_source", model::boundary_source_name, kBoundarySources);
    auto sig = t.num<uint32_t>("signature");
    if (!t.ok()) return t.status();
    s.layers.resize(t.rows());
    for (size_t i = 0; i < t.rows(); ++i) {
      auto& l = s.layers[i];
      l.layer_id = std::move(id[i]);
      l.segment = seg[i];
      l.layer_index = idx[i];
      l.row_start = rs[i];
      l.row_end = re[i];
      l.start_ns = start[i];
      l.end_ns = end[i];
      l.first_anchor_row = anchor[i];
      l.role = role[i];
      l.microbatch = micro[i];
      l.boundary_source = bsrc[i];
      l.signature = sig[i];
    }
  }
  {
    TableReader t(r, "/structure/hard_errors");
    auto type = t.str("error_type");
    auto rs = t.num<uint32_t>("row_start");
    auto re = t.num<uint32_t>("row_end");
    auto seg = t.num<int32_t>("segment");
    auto detail = t.str("detail");
    if (!t.ok()) return t.status();
    s.hard_errors.resize(t.rows());
    for (size_t i = 0; i < t.rows(); ++i)
      s.hard_errors[i] = model::HardError{std::move(type[i]), rs[i], re[i], seg[i], std::move(detail[i])};
  }
  {
    TableReader t(r, "/structure/boundary_checks");
    auto declared = t.num<int64_t>("declared_step");
    auto source = t.enums<StepSource>("step_source", model::step_source_name, kStepSources);
    auto rs = t.num<uint32_t>("row_start");
    auto re = t.num<uint32_t>("row_end");
    auto steps = t.num<uint32_t>("structural_steps");
    auto agrees = t.num<uint8_t>("agrees");
    auto note = t.str("note");
    if (!t.ok()) return t.status();
    s.boundary_checks.resize(t.rows());
    for (size_t i = 0; i < t.rows(); ++i)
      s.boundary_checks[i] =
          model::StepBoundaryCheck{declared[i], source[i], rs[i], re[i], steps[i], agrees[i] != 0, std::move(note[i])};
  }
  {
    TableReader t(r, "/structure/observations");
    auto seg = t.num<uint32_t>("segment");
    auto role = t.enums<LayerRole>("layer_role", model::layer_role_name, kLayerRoles);
    auto names = t.str_lists("implementation_names");
    if (!t.ok()) return t.status();
    s.observations.resize(t.rows());
    for (size_t i = 0; i < t.rows(); ++i) s.observations[i] = model::StructureObservation{seg[i], role[i], std::move(names[i])};
  }
  {
    TableReader t(r, "/structure/role_observations");
    auto seg = t.num<uint32_t>("segment");
    auto role = t.str("role");
    auto names = t.str_lists("implementation_names");
    auto rows = t.index_lists("rows");
    if (!t.ok()) return t.status();
    s.role_observations.resize(t.rows());
    for (size_t i = 0; i < t.rows(); ++i)
      s.role_observations[i] =
          model::StepRoleObservation{seg[i], std::move(role[i]), std::move(names[i]), std::move(rows[i])};
  }
  if (auto e = structure_inconsistency(s, model::RankClasses{}); !e.empty())
    return file_error(ErrorCode::kSchema, h5_path, "/structure", "inconsistent tables: " + e);

  if (r.kind("/classes") != store::ObjectKind::kGroup) return out;
  out.has_classes = true;
  model::RankClasses& c = out.classes;
  {
    TableReader t(r, "/classes/blocks");
    auto id = t.str("block_id");
    auto layer = t.num<uint32_t>("layer");
    auto idx = t.num<uint32_t>("block_index");
    auto kind = t.enums<BlockKind>("block_kind", model::block_kind_name, kBlockKinds);
    auto companion = t.num<uint8_t>("companion_layer");
    auto rs = t.num<uint32_t>("row_start");
    auto re = t.num<uint32_t>("row_end");
    auto start = t.num<int64_t>("start_ns");
    auto end = t.num<int64_t>("end_ns");
    auto events = t.num<uint32_t>("event_count");
    auto cls = t.num<uint32_t>("block_class");
    if (!t.ok()) return t.status();
    c.blocks.resize(t.rows());
    for (size_t i = 0; i < t.rows(); ++i) {
      auto& b = c.blocks[i];
      b.block_id = std::move(id[i]);
      b.layer = layer[i];
      b.block_index = idx[i];
      b.kind = kind[i];
      b.companion_layer = companion[i] != 0;
      b.row_start = rs[i];
      b.row_end = re[i];
      b.start_ns = start[i];
      b.end_ns = end[i];
      b.event_count = events[i];
      b.block_class = cls[i];
    }
  }
  ASCPROF_RETURN_IF_ERROR(read_classes(r, "/classes/block_classes", &c.block_classes));
  ASCPROF_RETURN_IF_ERROR(read_classes(r, "/classes/layer_classes", &c.layer_classes));
  ASCPROF_RETURN_IF_ERROR(read_classes(r, "/classes/step_classes", &c.step_classes));
  ASCPROF_ASSIGN_OR_RETURN(c.layer_class, read_class_index(r, "/classes/layer_class"));
  ASCPROF_ASSIGN_OR_RETURN(c.step_class, read_class_index(r, "/classes/step_class"));
  if (auto e = structure_inconsistency(s, c); !e.empty())
    return file_error(ErrorCode::kSchema, h5_path, "/classes", "inconsistent tables: " + e);
  return out;
}

}  // namespace ascprof::pipeline
