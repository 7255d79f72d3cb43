#include <string>

#include "ascprof/common/numbers.hpp"
#include "ascprof/importers/capture_info.hpp"
#include "json_read.hpp"

namespace ascprof::importers {
namespace {

namespace od = simdjson::ondemand;
using detail::strip_underscore;

class InfoReader {
 public:
  InfoReader(std::string label, const simdjson::padded_string& buf, od::document& doc, Stats& stats,
             model::ProfilerInfo& info)
      : label_(std::move(label)), buf_(buf), doc_(doc), stats_(stats), info_(info) {}

  Status run() {
    od::object top;
    if (auto e = doc_.get_object().get(top)) {
      if (e == simdjson::INCORRECT_TYPE)
        return file_error(ErrorCode::kSchema, label_, "byte 0", "top level is not a JSON object");
      return fail(e);
    }
    return for_each(top, [&](std::string_view key, od::value v) -> Status {
      if (key == "config") return for_object(v, key, [&](std::string_view k, od::value cv) { return config(k, cv); });
      if (key == "start_info") return for_object(v, key, [&](std::string_view k, od::value sv) {
          if (k == "freq") return read_int(sv, k, &info_.syscnt_freq_mhz);
          if (k == "start_cnt") return read_int(sv, k, &info_.start_cnt);
          if (k == "start_monotonic") return read_int(sv, k, &info_.start_monotonic_ns);
          return Status::ok_status();
        });
      if (key == "end_info") return for_object(v, key, [&](std::string_view k, od::value ev) {
          if (k == "collectionTimeEnd") return read_int(ev, k, &info_.collection_time_end_ns);
          if (k == "MonotonicTimeEnd") return read_int(ev, k, &info_.monotonic_time_end_ns);
          return Status::ok_status();
        });
      if (key == "torch_npu_version") return read_string(v, key, &info_.torch_npu_version);
      if (key == "cann_version") return read_string(v, key, &info_.cann_version);
      if (key == "rank_id") return rank_id(v);
      return Status::ok_status();
    });
  }

 private:
  Status config(std::string_view key, od::value v) {
    if (key == "common_config") {
      return for_object(v, key, [&](std::string_view k, od::value cv) -> Status {
        if (k == "record_shapes") return read_bool(cv, k, &info_.record_shapes);
        if (k == "profile_memory") return read_bool(cv, k, &info_.profile_memory);
        if (k == "with_stack") return read_bool(cv, k, &info_.with_stack);
        if (k == "schedule") {
          return for_object(cv, k, [&](std::string_view sk_raw, od::value sv) -> Status {
            std::string_view sk = strip_underscore(sk_raw);
            if (sk == "wait") return read_int(sv, sk_raw, &info_.schedule_wait);
            if (sk == "warmup") return read_int(sv, sk_raw, &info_.schedule_warmup);
            if (sk == "active") return read_int(sv, sk_raw, &info_.schedule_active);
            if (sk == "repeat") return read_int(sv, sk_raw, &info_.schedule_repeat);
            if (sk == "skip_first") return read_int(sv, sk_raw, &info_.schedule_skip_first);
            return Status::ok_status();
          });
        }
        return Status::ok_status();
      });
    }
    if (key == "experimental_config") {
      return for_object(v, key, [&](std::string_view k_raw, od::value ev) -> Status {
        std::string_view k = strip_underscore(k_raw);
        if (k == "profiler_level") return read_string(ev, k_raw, &info_.profiler_level);
        if (k == "aic_metrics") return read_string(ev, k_raw, &info_.aic_metrics);
        if (k == "export_type") return export_type(ev, k_raw);
        return Status::ok_status();
      });
    }
    return Status::ok_status();
  }

  Status export_type(od::value v, std::string_view key) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type != od::json_type::array) return read_string(v, key, &info_.export_type);
    od::array arr;
    if (auto e = v.get_array().get(arr)) return fail(e);
    info_.export_type.clear();
    for (auto item : arr) {
      od::value iv;
      if (auto e = std::move(item).get(iv)) return fail(e);
      std::string s;
      ASCPROF_RETURN_IF_ERROR(read_string(iv, key, &s));
      if (s.empty()) continue;
      if (!info_.export_type.empty()) info_.export_type += ',';
      info_.export_type += s;
    }
    return Status::ok_status();
  }

  Status rank_id(od::value v) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type == od::json_type::null) return Status::ok_status();
    std::optional<int64_t> r;
    if (type == od::json_type::number) {
      int64_t n = 0;
      if (v.get_int64().get(n) == simdjson::SUCCESS) r = n;
    } else if (type == od::json_type::string) {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return fail(e);
      if (trim(s).empty()) return Status::ok_status();
      r = parse_int64(s);
    }
    if (r && *r == -1) return Status::ok_status();  // msprof's "unknown rank" marker
    if (!r || *r < 0) {
      stats_.note(Stat::info_bad_rank_id, label_ + ":key rank_id: not a non-negative integer; ignored");
      return Status::ok_status();
    }
    info_.rank_id_from_body = *r;
    return Status::ok_status();
  }

  Status read_int(od::value v, std::string_view key, int64_t* out) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type == od::json_type::null) return Status::ok_status();
    int64_t n = 0;
    if (type == od::json_type::number && v.get_int64().get(n) == simdjson::SUCCESS) {
      *out = n;
      return Status::ok_status();
    }
    return bad_value(key, "not an integer");
  }

  Status read_bool(od::value v, std::string_view key, bool* out) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type == od::json_type::null) return Status::ok_status();
    if (type == od::json_type::boolean) {
      if (auto e = v.get_bool().get(*out)) return fail(e);
      return Status::ok_status();
    }
    return bad_value(key, "not true/false");
  }

  Status read_string(od::value v, std::string_view key, std::string* out) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type == od::json_type::null) return Status::ok_status();
    if (type == od::json_type::string) {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return fail(e);
      out->assign(s);
      return Status::ok_status();
    }
    return bad_value(key, "not a string");
  }

  Status bad_value(std::string_view key, std::string_view what) {
    std::string d = label_;
    d += ":key ";
    d += key;
    d += ": ";
    d += what;
    d += "; ignored";
    stats_.note(Stat::info_bad_value, std::move(d));
    return Status::ok_status();
  }

  template <typename Fn>
  Status for_each(od::object& obj, Fn&& fn) {
    for (auto f : obj) {
      od::field field;
      if (auto e = std::move(f).get(field)) return fail(e);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e);
      ASCPROF_RETURN_IF_ERROR(fn(key, field.value()));
    }
    return Status::ok_status();
  }

  // Visits the fields of `v` if it is an object; anything else is counted and skipped.
  template <typename Fn>
  Status for_object(od::value v, std::string_view key, Fn&& fn) {
    od::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    if (type == od::json_type::null) return Status::ok_status();
    if (type != od::json_type::object) return bad_value(key, "not an object");
    od::object obj;
    if (auto e = v.get_object().get(obj)) return fail(e);
    return for_each(obj, fn);
  }

  Status fail(simdjson::error_code e) { return detail::json_error(e, label_, buf_, doc_); }

  std::string label_;
  const simdjson::padded_string& buf_;
  od::document& doc_;
  Stats& stats_;
  model::ProfilerInfo& info_;
};

}  // namespace

Result<model::ProfilerInfo> read_profiler_info(const std::filesystem::path& path, Stats& stats) {
  model::ProfilerInfo info;
  info.rank_id_from_name = rank_from_profiler_info_name(path.filename().string());
  ASCPROF_RETURN_IF_ERROR((detail::read_json_file<InfoReader>(path, stats, info)));
  return info;
}

}  // namespace ascprof::importers
