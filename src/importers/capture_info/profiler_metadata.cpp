#include <string>

#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/capture_info.hpp"
#include "json_read.hpp"

namespace ascprof::importers {
namespace {

namespace od = simdjson::ondemand;

class MetadataReader {
 public:
  MetadataReader(std::string label, const simdjson::padded_string& buf, od::document& doc, Stats& stats,
                 model::ProfilerMetadata& meta)
      : label_(std::move(label)), buf_(buf), doc_(doc), stats_(stats), meta_(meta) {}

  Status run() {
    od::object top;
    if (auto e = doc_.get_object().get(top)) {
      if (e == simdjson::INCORRECT_TYPE)
        return file_error(ErrorCode::kSchema, label_, "byte 0", "top level is not a JSON object");
      return fail(e);
    }
    for (auto f : top) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e);
      if (key == "parallel_group_info") {
        ASCPROF_RETURN_IF_ERROR(groups(field.value()));
      } else if (key == "distributed_args") {
        ASCPROF_RETURN_IF_ERROR(distributed_args(field.value()));
      }
    }
    return Status::ok_status();
  }

 private:
  Status groups(od::value v) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type == od::json_type::null) return Status::ok_status();
    if (type != od::json_type::object) return bad_group("parallel_group_info", "not an object");
    od::object obj;
    if (auto e = v.get_object().get(obj)) return fail(e);
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e);
      std::string_view comm_name;
      if (auto e = field.unescaped_key().get(comm_name)) return fail(e);
      ASCPROF_RETURN_IF_ERROR(group(comm_name, field.value()));
    }
    return Status::ok_status();
  }

  Status group(std::string_view comm_name, od::value v) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type != od::json_type::object) return bad_group(comm_name, "entry is not an object");
    model::ParallelGroup g;
    g.comm_name.assign(comm_name);
    bool have_ranks = false;
    std::string_view problem;
    od::object obj;
    if (auto e = v.get_object().get(obj)) return fail(e);
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e);
      od::value fv = field.value();
      od::json_type ft;
      if (auto e = fv.type().get(ft)) return fail(e);
      if (key == "group_name") {
        if (ft == od::json_type::string) {
          std::string_view s;
          if (auto e = fv.get_string().get(s)) return fail(e);
          g.group_name.assign(s);
        } else if (ft != od::json_type::null) {
          problem = "group_name is not a string";
        }
      } else if (key == "group_rank") {
        std::optional<int64_t> r;
        ASCPROF_RETURN_IF_ERROR(integer(fv, ft, &r));
        if (r) g.group_rank = *r;
        else if (ft != od::json_type::null) problem = "group_rank is not an integer";
      } else if (key == "global_ranks") {
        if (ft != od::json_type::array) {
          problem = "global_ranks is not an array";
          continue;
        }
        od::array arr;
        if (auto e = fv.get_array().get(arr)) return fail(e);
        have_ranks = true;
        for (auto item : arr) {
          od::value iv;
          if (auto e = std::move(item).get(iv)) return fail(e);
          od::json_type it;
          if (auto e = iv.type().get(it)) return fail(e);
          std::optional<int64_t> r;
          ASCPROF_RETURN_IF_ERROR(integer(iv, it, &r));
          if (!r || *r < 0) {
            problem = "global_ranks holds a value that is not a non-negative integer";
            continue;  // keep consuming the array so the document stays in step
          }
          g.global_ranks.push_back(*r);
        }
      }
    }
    if (problem.empty() && !have_ranks) problem = "no global_ranks";
    if (!problem.empty()) return bad_group(comm_name, problem);
    g.hash = double_hash(g.comm_name);
    meta_.groups.push_back(std::move(g));
    return Status::ok_status();
  }

  // An int, or a numeric string (tolerated: some writers stringify everything).
  Status integer(od::value& v, od::json_type type, std::optional<int64_t>* out) {
    if (type == od::json_type::number) {
      int64_t n = 0;
      if (v.get_int64().get(n) == simdjson::SUCCESS) *out = n;
    } else if (type == od::json_type::string) {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return fail(e);
      *out = parse_int64(s);
    }
    return Status::ok_status();
  }

  Status distributed_args(od::value v) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type != od::json_type::object) {
      stats_.note(Stat::meta_bad_value, label_ + ":key distributed_args: not an object; skipped");
      return Status::ok_status();
    }
    od::object obj;
    if (auto e = v.get_object().get(obj)) return fail(e);
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e);
      std::string k(key);
      od::value fv = field.value();
      od::json_type ft;
      if (auto e = fv.type().get(ft)) return fail(e);
      if (ft == od::json_type::string) {
        std::string_view s;
        if (auto e = fv.get_string().get(s)) return fail(e);
        meta_.distributed_args.emplace_back(std::move(k), std::string(s));
      } else if (ft == od::json_type::object || ft == od::json_type::array) {
        stats_.note(Stat::meta_bad_value, label_ + ":key distributed_args." + k + ": object/array value; skipped");
      } else {
        meta_.distributed_args.emplace_back(std::move(k), std::string(trim(fv.raw_json_token())));
      }
    }
    return Status::ok_status();
  }

  Status bad_group(std::string_view comm_name, std::string_view problem) {
    std::string d = label_;
    d += ":key parallel_group_info.";
    d += comm_name;
    d += ": ";
    d += problem;
    d += "; skipped";
    stats_.note(Stat::meta_bad_group, std::move(d));
    return Status::ok_status();
  }

  Status fail(simdjson::error_code e) { return detail::json_error(e, label_, buf_, doc_); }

  std::string label_;
  const simdjson::padded_string& buf_;
  od::document& doc_;
  Stats& stats_;
  model::ProfilerMetadata& meta_;
};

}  // namespace

Result<model::ProfilerMetadata> read_profiler_metadata(const std::filesystem::path& path, Stats& stats) {
  model::ProfilerMetadata meta;
  ASCPROF_RETURN_IF_ERROR((detail::read_json_file<MetadataReader>(path, stats, meta)));
  return meta;
}

Result<model::ProfilerMetadata> parse_profiler_metadata(std::string_view json, const std::string& label, Stats& stats) {
  model::ProfilerMetadata meta;
  simdjson::padded_string buf(json);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto e = parser.iterate(buf).get(doc)) return detail::iterate_error(e, label, buf.size());
  Stats local;
  MetadataReader reader(label, buf, doc, local, meta);
  ASCPROF_RETURN_IF_ERROR(reader.run());
  stats.merge(local);
  return meta;
}

}  // namespace ascprof::importers
