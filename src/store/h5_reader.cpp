#include "ascprof/store/h5_reader.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <system_error>

#include "h5_detail.hpp"

namespace ascprof::store {

namespace fs = std::filesystem;

namespace {

Status schema_error(const fs::path& file, std::string_view place, std::string_view reason) {
  return file_error(ErrorCode::kSchema, file.string(), place, reason);
}

/// Reads every element of a string-typed dataset or attribute (`type`, `space` describe it).
/// `read(memtype, buf)` performs the H5Dread/H5Aread.
Result<std::vector<std::string>> read_string_values(hid_t type, hid_t space, const fs::path& file,
                                                    const std::string& place,
                                                    const std::function<herr_t(hid_t, void*)>& read) {
  const hssize_t npoints = H5Sget_simple_extent_npoints(space);
  if (npoints < 0) return h5_error(file.string(), place);
  const auto n = static_cast<size_t>(npoints);
  std::vector<std::string> out;
  out.reserve(n);
  if (n == 0) return out;
  // Reading with a copy of the file type keeps the character set: HDF5 refuses ASCII<->UTF-8 conversion.
  H5Handle mem(H5Tcopy(type), H5Kind::kDatatype);
  if (!mem.valid()) return h5_error(file.string(), place);
  const htri_t is_var = H5Tis_variable_str(type);
  if (is_var < 0) return h5_error(file.string(), place);
  if (is_var > 0) {
    std::vector<char*> ptrs(n, nullptr);
    if (read(mem.get(), ptrs.data()) < 0) return h5_error(file.string(), place);
    for (char* p : ptrs) out.emplace_back(p != nullptr ? p : "");
    // Frees the library-allocated strings (H5Treclaim in 1.12+).
    H5Dvlen_reclaim(mem.get(), space, H5P_DEFAULT, ptrs.data());
    return out;
  }
  const size_t width = H5Tget_size(type);
  if (width == 0) return h5_error(file.string(), place);
  std::vector<char> buf(n * width);
  if (read(mem.get(), buf.data()) < 0) return h5_error(file.string(), place);
  const H5T_str_t pad = H5Tget_strpad(type);
  for (size_t i = 0; i < n; ++i) {
    const char* s = buf.data() + i * width;
    size_t len = strnlen(s, width);
    if (pad == H5T_STR_SPACEPAD)
      while (len > 0 && s[len - 1] == ' ') --len;
    out.emplace_back(s, len);
  }
  return out;
}

struct OpenColumn {
  H5Handle ds;
  H5Handle type;   ///< the column's element type (a member's type for a table column)
  H5Handle space;
  ColumnType ctype = ColumnType::kUInt8;
  uint64_t n = 0;
  std::string member;  ///< non-empty: the column is this member of the compound dataset `ds`
};

/// `table/column` as a member of the compound dataset `table` (what TableWriter writes), or an
/// error naming why not.
Status open_member(hid_t file, const fs::path& path, const std::string& name, OpenColumn* c) {
  const size_t slash = name.rfind('/');
  const std::string table = slash == 0 ? "/" : name.substr(0, slash);
  const std::string member = name.substr(slash + 1);
  const std::string place = "read column " + name;
  c->ds = H5Handle(H5Dopen2(file, table.c_str(), H5P_DEFAULT), H5Kind::kDataset);
  if (!c->ds.valid()) return h5_error(path.string(), place);
  H5Handle record(H5Dget_type(c->ds.get()), H5Kind::kDatatype);
  if (!record.valid()) return h5_error(path.string(), place);
  if (H5Tget_class(record.get()) != H5T_COMPOUND) return schema_error(path, place, table + " is not a table");
  const int index = H5Tget_member_index(record.get(), member.c_str());
  if (index < 0) {
    H5Eclear2(H5E_DEFAULT);
    return schema_error(path, place, "table " + table + " has no column '" + member + "'");
  }
  c->type = H5Handle(H5Tget_member_type(record.get(), static_cast<unsigned>(index)), H5Kind::kDatatype);
  c->member = member;
  return {};
}

Result<OpenColumn> open_column(hid_t file, const fs::path& path, std::string_view dataset) {
  silence_hdf5_errors();
  const std::string name = detail::object_path(dataset);
  const std::string place = "read dataset " + name;
  OpenColumn c;
  c.ds = H5Handle(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Kind::kDataset);
  if (c.ds.valid()) {
    c.type = H5Handle(H5Dget_type(c.ds.get()), H5Kind::kDatatype);
  } else {
    const Status not_dataset = h5_error(path.string(), place);
    if (name == "/") return not_dataset;
    if (Status s = open_member(file, path, name, &c); !s.ok()) return s.code() == ErrorCode::kSchema ? s : not_dataset;
  }
  c.space = H5Handle(H5Dget_space(c.ds.get()), H5Kind::kDataspace);
  if (!c.type.valid() || !c.space.valid()) return h5_error(path.string(), place);
  if (H5Sget_simple_extent_ndims(c.space.get()) != 1) return schema_error(path, place, "not a 1-D dataset");
  hsize_t dims = 0;
  if (H5Sget_simple_extent_dims(c.space.get(), &dims, nullptr) < 0) return h5_error(path.string(), place);
  c.n = dims;
  if (!detail::classify_type(c.type.get(), &c.ctype))
    return schema_error(path, place, "element type is not one the store writes");
  return c;
}

/// Reads the column into `buf` as `mem` elements: the whole dataset, or only its member.
herr_t read_into(const OpenColumn& c, hid_t mem, hid_t xfer, void* buf) {
  if (c.member.empty()) return H5Dread(c.ds.get(), mem, H5S_ALL, H5S_ALL, xfer, buf);
  // a one-member record type: HDF5 reads just that field of every record
  H5Handle one(H5Tcreate(H5T_COMPOUND, H5Tget_size(mem)), H5Kind::kDatatype);
  if (!one.valid() || H5Tinsert(one.get(), c.member.c_str(), 0, mem) < 0) return -1;
  return H5Dread(c.ds.get(), one.get(), H5S_ALL, H5S_ALL, xfer, buf);
}

}  // namespace

Result<H5Reader> H5Reader::open(const fs::path& path) {
  silence_hdf5_errors();
  const std::string p = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec)) return file_error(ErrorCode::kIo, p, "open", "folder does not exist: " + parent.string());
    return file_error(ErrorCode::kIo, p, "open", "no such file");
  }
  if (!fs::is_regular_file(path, ec)) return file_error(ErrorCode::kIo, p, "open", "not a regular file");
  const htri_t is_h5 = H5Fis_hdf5(path.c_str());
  if (is_h5 < 0) return file_error(ErrorCode::kIo, p, "open", "cannot read: " + detail::h5_error_reason());
  if (is_h5 == 0) return file_error(ErrorCode::kIo, p, "open", "not an HDF5 file (no HDF5 signature)");
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0)
    return file_error(ErrorCode::kIo, p, "open", "cannot open HDF5 file: " + detail::h5_error_reason());
  H5Reader r;
  r.file_ = H5Handle(f, H5Kind::kFile);
  r.path_ = path;
  return r;
}

ObjectKind H5Reader::kind(std::string_view object) const {
  silence_hdf5_errors();
  const std::string name = detail::object_path(object);
  if (name != "/") {
    // Check link by link: H5Lexists fails (instead of returning false) when a parent is missing.
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = name.find('/', pos + 1);
      const std::string prefix = name.substr(0, pos);
      if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        // the last step may be a column of a table (a member of its compound dataset)
        OpenColumn c;
        if (pos == std::string::npos && open_member(file_.get(), path_, name, &c).ok()) return ObjectKind::kDataset;
        H5Eclear2(H5E_DEFAULT);
        return ObjectKind::kMissing;
      }
    }
  }
  H5O_info_t info;
  if (H5Oget_info_by_name2(file_.get(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    H5Eclear2(H5E_DEFAULT);  // e.g. an external link whose target file is gone
    return ObjectKind::kMissing;
  }
  if (info.type == H5O_TYPE_GROUP) return ObjectKind::kGroup;
  if (info.type == H5O_TYPE_DATASET) return ObjectKind::kDataset;
  return ObjectKind::kOther;
}

namespace {
herr_t collect_name(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
}  // namespace

bool H5Reader::is_table(std::string_view object) const {
  const ObjectKind k = kind(object);
  if (k == ObjectKind::kGroup) return has_attr(object, "row_count");
  if (k != ObjectKind::kDataset) return false;
  const std::string name = detail::object_path(object);
  H5Handle ds(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Kind::kDataset);
  if (!ds.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return false;  // a column of a table
  }
  H5Handle type(H5Dget_type(ds.get()), H5Kind::kDatatype);
  return type.valid() && H5Tget_class(type.get()) == H5T_COMPOUND;
}

Result<std::vector<std::string>> H5Reader::list(std::string_view group) const {
  silence_hdf5_errors();
  const std::string name = detail::object_path(group);
  const std::string place = "list group " + name;
  if (kind(name) == ObjectKind::kDataset) {
    // a table: its columns
    H5Handle ds(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Kind::kDataset);
    H5Handle type(ds.valid() ? H5Dget_type(ds.get()) : -1, H5Kind::kDatatype);
    if (!type.valid() || H5Tget_class(type.get()) != H5T_COMPOUND) return h5_error(path_.string(), place);
    std::vector<std::string> names;
    for (int i = 0, n = H5Tget_nmembers(type.get()); i < n; ++i) {
      char* m = H5Tget_member_name(type.get(), static_cast<unsigned>(i));
      if (m == nullptr) return h5_error(path_.string(), place);
      names.emplace_back(m);
      H5free_memory(m);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  H5Handle g(H5Gopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Kind::kGroup);
  if (!g.valid()) return h5_error(path_.string(), place);
  std::vector<std::string> names;
  if (H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names) < 0)
    return h5_error(path_.string(), place);
  return names;
}

Result<ColumnType> H5Reader::column_type(std::string_view dataset) const {
  ASCPROF_ASSIGN_OR_RETURN(OpenColumn c, open_column(file_.get(), path_, dataset));
  return c.ctype;
}

Result<uint64_t> H5Reader::column_length(std::string_view dataset) const {
  ASCPROF_ASSIGN_OR_RETURN(OpenColumn c, open_column(file_.get(), path_, dataset));
  return c.n;
}

template <class T>
  requires kIsColumnElement<T>
Result<std::vector<T>> H5Reader::read_column(std::string_view dataset) const {
  ASCPROF_ASSIGN_OR_RETURN(OpenColumn c, open_column(file_.get(), path_, dataset));
  const ColumnType want = column_type_of<T>();
  const std::string place = "read dataset " + detail::object_path(dataset);
  if (c.ctype != want)
    return schema_error(path_, place,
                        std::string("element type is ") + column_type_name(c.ctype) + ", expected " +
                            column_type_name(want));
  std::vector<T> out(c.n);
  if (c.n > 0 && read_into(c, detail::native_type(want), H5P_DEFAULT, out.data()) < 0)
    return h5_error(path_.string(), place);
  return out;
}

// ---- whole tables ---------------------------------------------------------------------------------

TableData::TableData(TableData&& o) noexcept
    : file_(std::move(o.file_)),
      table_(std::move(o.table_)),
      rows_(o.rows_),
      record_(o.record_),
      records_(std::move(o.records_)),
      members_(std::move(o.members_)),
      mem_type_(std::move(o.mem_type_)),
      space_(std::move(o.space_)) {
  o.records_.clear();
}

TableData::~TableData() {
  const bool any_vlen = std::any_of(members_.begin(), members_.end(), [](const Member& m) { return m.vlen; });
  if (any_vlen && !records_.empty() && mem_type_.valid() && space_.valid())
    H5Dvlen_reclaim(mem_type_.get(), space_.get(), H5P_DEFAULT, records_.data());  // frees HDF5's strings
}

const TableData::Member* TableData::find(std::string_view name) const {
  for (const Member& m : members_)
    if (m.name == name) return &m;
  return nullptr;
}

Status TableData::member_error(std::string_view name, const std::string& reason) const {
  return schema_error(file_, "read column " + table_ + "/" + std::string(name), reason);
}

template <class T>
  requires kIsColumnElement<T>
Result<std::vector<T>> TableData::column(std::string_view name) const {
  const Member* m = find(name);
  if (m == nullptr) return member_error(name, "missing column");
  const ColumnType want = column_type_of<T>();
  if (m->type != want)
    return member_error(name, std::string("element type is ") + column_type_name(m->type) + ", expected " +
                                  column_type_name(want));
  std::vector<T> out(rows_);
  for (uint64_t r = 0; r < rows_; ++r) std::memcpy(&out[r], records_.data() + r * record_ + m->offset, sizeof(T));
  return out;
}

template Result<std::vector<uint8_t>> TableData::column<uint8_t>(std::string_view) const;
template Result<std::vector<int32_t>> TableData::column<int32_t>(std::string_view) const;
template Result<std::vector<uint32_t>> TableData::column<uint32_t>(std::string_view) const;
template Result<std::vector<int64_t>> TableData::column<int64_t>(std::string_view) const;
template Result<std::vector<uint64_t>> TableData::column<uint64_t>(std::string_view) const;
template Result<std::vector<float>> TableData::column<float>(std::string_view) const;
template Result<std::vector<double>> TableData::column<double>(std::string_view) const;

Result<std::vector<std::string>> TableData::strings(std::string_view name) const {
  const Member* m = find(name);
  if (m == nullptr) return member_error(name, "missing column");
  if (m->type != ColumnType::kString)
    return member_error(name, std::string("element type is ") + column_type_name(m->type) + ", expected string");
  std::vector<std::string> out;
  out.reserve(rows_);
  for (uint64_t r = 0; r < rows_; ++r) {
    const unsigned char* cell = records_.data() + r * record_ + m->offset;
    if (m->vlen) {
      const char* p = nullptr;
      std::memcpy(&p, cell, sizeof p);
      out.emplace_back(p != nullptr ? p : "");
    } else {
      const char* s = reinterpret_cast<const char*>(cell);
      out.emplace_back(s, strnlen(s, m->width));
    }
  }
  return out;
}

Result<TableData> H5Reader::read_table(std::string_view table) const {
  silence_hdf5_errors();
  const std::string name = detail::object_path(table);
  const std::string place = "read table " + name;
  H5Handle ds(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Kind::kDataset);
  if (!ds.valid()) return h5_error(path_.string(), place);
  H5Handle ftype(H5Dget_type(ds.get()), H5Kind::kDatatype);
  if (!ftype.valid()) return h5_error(path_.string(), place);
  if (H5Tget_class(ftype.get()) != H5T_COMPOUND) return schema_error(path_, place, "not a table (compound dataset)");
  TableData t;
  t.file_ = path_;
  t.table_ = name;
  t.space_ = H5Handle(H5Dget_space(ds.get()), H5Kind::kDataspace);
  t.mem_type_ = H5Handle(H5Tget_native_type(ftype.get(), H5T_DIR_ASCEND), H5Kind::kDatatype);
  if (!t.space_.valid() || !t.mem_type_.valid()) return h5_error(path_.string(), place);
  if (H5Sget_simple_extent_ndims(t.space_.get()) != 1) return schema_error(path_, place, "not a 1-D dataset");
  hsize_t dims = 0;
  if (H5Sget_simple_extent_dims(t.space_.get(), &dims, nullptr) < 0) return h5_error(path_.string(), place);
  t.rows_ = dims;
  t.record_ = H5Tget_size(t.mem_type_.get());
  const int n = H5Tget_nmembers(t.mem_type_.get());
  if (n < 0 || t.record_ == 0) return h5_error(path_.string(), place);
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<unsigned>(i);
    char* mname = H5Tget_member_name(t.mem_type_.get(), u);
    H5Handle mtype(H5Tget_member_type(t.mem_type_.get(), u), H5Kind::kDatatype);
    if (mname == nullptr || !mtype.valid()) return h5_error(path_.string(), place);
    TableData::Member m;
    m.name = mname;
    H5free_memory(mname);
    if (!detail::classify_type(mtype.get(), &m.type))
      return schema_error(path_, place, "column '" + m.name + "' has a type the store does not write");
    m.offset = H5Tget_member_offset(t.mem_type_.get(), u);
    m.width = H5Tget_size(mtype.get());
    m.vlen = m.type == ColumnType::kString && H5Tis_variable_str(mtype.get()) > 0;
    t.members_.push_back(std::move(m));
  }
  t.records_.resize(static_cast<size_t>(t.rows_) * t.record_);
  if (t.rows_ > 0) {
    H5Handle dxpl = detail::transfer_plist(static_cast<size_t>(t.rows_), t.record_);
    if (!dxpl.valid() || H5Dread(ds.get(), t.mem_type_.get(), H5S_ALL, H5S_ALL, dxpl.get(), t.records_.data()) < 0) {
      t.records_.clear();  // nothing of HDF5's to free
      return h5_error(path_.string(), place);
    }
  }
  return t;
}

template Result<std::vector<uint8_t>> H5Reader::read_column<uint8_t>(std::string_view) const;
template Result<std::vector<int32_t>> H5Reader::read_column<int32_t>(std::string_view) const;
template Result<std::vector<uint32_t>> H5Reader::read_column<uint32_t>(std::string_view) const;
template Result<std::vector<int64_t>> H5Reader::read_column<int64_t>(std::string_view) const;
template Result<std::vector<uint64_t>> H5Reader::read_column<uint64_t>(std::string_view) const;
template Result<std::vector<float>> H5Reader::read_column<float>(std::string_view) const;
template Result<std::vector<double>> H5Reader::read_column<double>(std::string_view) const;

Result<std::vector<std::string>> H5Reader::read_strings(std::string_view dataset) const {
  ASCPROF_ASSIGN_OR_RETURN(OpenColumn c, open_column(file_.get(), path_, dataset));
  const std::string place = "read dataset " + detail::object_path(dataset);
  if (c.ctype != ColumnType::kString)
    return schema_error(path_, place, std::string("element type is ") + column_type_name(c.ctype) + ", expected string");
  H5Handle dxpl = detail::transfer_plist(c.n, sizeof(hvl_t));
  if (!dxpl.valid()) return h5_error(path_.string(), place);
  const hid_t xfer = dxpl.get();
  return read_string_values(c.type.get(), c.space.get(), path_, place,
                            [&c, xfer](hid_t mem, void* buf) { return read_into(c, mem, xfer, buf); });
}

Status H5Reader::read_string_pool(std::string_view dataset, StringPool* pool) const {
  const std::string place = "read string table " + detail::object_path(dataset);
  if (pool->size() != 1)
    return file_error(ErrorCode::kInternal, path_.string(), place, "the string pool must be fresh");
  ASCPROF_ASSIGN_OR_RETURN(std::vector<std::string> strs, read_strings(dataset));
  if (strs.empty() || !strs[0].empty()) return schema_error(path_, place, "row 0 must be the empty string");
  for (size_t i = 1; i < strs.size(); ++i) {
    if (pool->intern(strs[i]) != i)
      return schema_error(path_, place, "row " + std::to_string(i) + " repeats an earlier string");
  }
  return {};
}

// ---- attributes ---------------------------------------------------------------------------------

namespace {

struct OpenAttr {
  H5Handle obj;
  H5Handle attr;
  H5Handle type;
  H5Handle space;
  uint64_t n = 0;
  bool scalar = false;
  H5T_class_t cls = H5T_NO_CLASS;
};

Result<OpenAttr> open_attr(hid_t file, const fs::path& path, std::string_view object, std::string_view name) {
  silence_hdf5_errors();
  const std::string obj_name = detail::object_path(object);
  const std::string attr_name(name);
  const std::string place = "read attribute " + detail::attr_label(obj_name, name);
  OpenAttr a;
  a.obj = H5Handle(H5Oopen(file, obj_name.c_str(), H5P_DEFAULT), H5Kind::kObject);
  if (!a.obj.valid()) return h5_error(path.string(), place);
  const htri_t exists = H5Aexists(a.obj.get(), attr_name.c_str());
  if (exists < 0) return h5_error(path.string(), place);
  if (exists == 0) return schema_error(path, place, "no such attribute");
  a.attr = H5Handle(H5Aopen(a.obj.get(), attr_name.c_str(), H5P_DEFAULT), H5Kind::kAttribute);
  if (!a.attr.valid()) return h5_error(path.string(), place);
  a.type = H5Handle(H5Aget_type(a.attr.get()), H5Kind::kDatatype);
  a.space = H5Handle(H5Aget_space(a.attr.get()), H5Kind::kDataspace);
  if (!a.type.valid() || !a.space.valid()) return h5_error(path.string(), place);
  const hssize_t npoints = H5Sget_simple_extent_npoints(a.space.get());
  if (npoints < 0) return h5_error(path.string(), place);
  a.n = static_cast<uint64_t>(npoints);
  a.scalar = H5Sget_simple_extent_type(a.space.get()) == H5S_SCALAR;
  a.cls = H5Tget_class(a.type.get());
  return a;
}

}  // namespace

bool H5Reader::has_attr(std::string_view object, std::string_view name) const {
  silence_hdf5_errors();
  const std::string obj_name = detail::object_path(object);
  const std::string attr_name(name);
  const htri_t r = H5Aexists_by_name(file_.get(), obj_name.c_str(), attr_name.c_str(), H5P_DEFAULT);
  if (r < 0) H5Eclear2(H5E_DEFAULT);
  return r > 0;
}

template <class T>
Result<std::vector<T>> H5Reader::numeric_attr(std::string_view object, std::string_view name, bool scalar) const {
  ASCPROF_ASSIGN_OR_RETURN(OpenAttr a, open_attr(file_.get(), path_, object, name));
  const ColumnType want = column_type_of<T>();
  const std::string place = "read attribute " + detail::attr_label(detail::object_path(object), name);
  const bool ok_class = a.cls == H5T_INTEGER || (want == ColumnType::kDouble && a.cls == H5T_FLOAT);
  if (!ok_class)
    return schema_error(path_, place, std::string("attribute is not convertible to ") + column_type_name(want));
  if (scalar && a.n != 1) return schema_error(path_, place, "expected a single value, found " + std::to_string(a.n));
  std::vector<T> out(a.n);
  if (a.n > 0 && H5Aread(a.attr.get(), detail::native_type(want), out.data()) < 0)
    return h5_error(path_.string(), place);
  return out;
}

Result<int64_t> H5Reader::int_attr(std::string_view object, std::string_view name) const {
  ASCPROF_ASSIGN_OR_RETURN(std::vector<int64_t> v, numeric_attr<int64_t>(object, name, true));
  return v[0];
}

Result<uint64_t> H5Reader::uint_attr(std::string_view object, std::string_view name) const {
  ASCPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> v, numeric_attr<uint64_t>(object, name, true));
  return v[0];
}

Result<double> H5Reader::double_attr(std::string_view object, std::string_view name) const {
  ASCPROF_ASSIGN_OR_RETURN(std::vector<double> v, numeric_attr<double>(object, name, true));
  return v[0];
}

Result<std::vector<int64_t>> H5Reader::int_array_attr(std::string_view object, std::string_view name) const {
  return numeric_attr<int64_t>(object, name, false);
}

Result<std::vector<uint64_t>> H5Reader::uint_array_attr(std::string_view object, std::string_view name) const {
  return numeric_attr<uint64_t>(object, name, false);
}

Result<std::vector<double>> H5Reader::double_array_attr(std::string_view object, std::string_view name) const {
  return numeric_attr<double>(object, name, false);
}

Result<std::vector<std::string>> H5Reader::string_array_attr(std::string_view object, std::string_view name) const {
  ASCPROF_ASSIGN_OR_RETURN(OpenAttr a, open_attr(file_.get(), path_, object, name));
  const std::string place = "read attribute " + detail::attr_label(detail::object_path(object), name);
  if (a.cls != H5T_STRING) return schema_error(path_, place, "attribute is not a string");
  const hid_t attr = a.attr.get();
  return read_string_values(a.type.get(), a.space.get(), path_, place,
                            [attr](hid_t mem, void* buf) { return H5Aread(attr, mem, buf); });
}

Result<std::string> H5Reader::string_attr(std::string_view object, std::string_view name) const {
  ASCPROF_ASSIGN_OR_RETURN(std::vector<std::string> v, string_array_attr(object, name));
  if (v.size() != 1)
    return schema_error(path_, "read attribute " + detail::attr_label(detail::object_path(object), name),
                        "expected a single string, found " + std::to_string(v.size()));
  return std::move(v[0]);
}

Result<std::vector<Fingerprint>> H5Reader::read_fingerprints(std::string_view object) const {
  std::vector<Fingerprint> out;
  if (!has_attr(object, "input_paths")) return out;
  ASCPROF_ASSIGN_OR_RETURN(std::vector<std::string> paths, string_array_attr(object, "input_paths"));
  ASCPROF_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, int_array_attr(object, "input_sizes"));
  ASCPROF_ASSIGN_OR_RETURN(std::vector<int64_t> mtimes, int_array_attr(object, "input_mtimes_ns"));
  ASCPROF_ASSIGN_OR_RETURN(std::vector<uint64_t> hashes, uint_array_attr(object, "input_prefix_hashes"));
  if (sizes.size() != paths.size() || mtimes.size() != paths.size() || hashes.size() != paths.size())
    return schema_error(path_, "read fingerprints " + detail::object_path(object), "input_* attributes differ in length");
  out.resize(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    out[i].path = std::move(paths[i]);
    out[i].size = static_cast<uint64_t>(sizes[i]);
    out[i].mtime_ns = mtimes[i];
    out[i].prefix_hash = hashes[i];
  }
  return out;
}

// ---- checkpoints --------------------------------------------------------------------------------

Result<CheckpointInfo> read_checkpoint_info(const fs::path& path) {
  const std::string p = path.string();
  auto opened = H5Reader::open(path);
  if (!opened.ok()) {
    // Keep the one "PATH:PLACE: REASON" shape: re-place open()'s reason under "checkpoint".
    std::string reason = opened.status().message();
    const std::string prefix = p + ":open: ";
    if (reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
    return file_error(opened.status().code(), p, "checkpoint", "not a valid checkpoint: " + reason);
  }
  const H5Reader& r = opened.value();
  if (!r.has_attr("/", "complete"))
    return file_error(ErrorCode::kSchema, p, "checkpoint", "not a valid checkpoint: no 'complete' attribute (unfinished write)");
  auto complete = r.int_attr("/", "complete");
  if (!complete.ok()) return complete.status();
  if (*complete != 1)
    return file_error(ErrorCode::kSchema, p, "checkpoint", "not a valid checkpoint: complete = " + std::to_string(*complete));
  CheckpointInfo info;
  ASCPROF_ASSIGN_OR_RETURN(info.tool_version, r.string_attr("/", "tool_version"));
  ASCPROF_ASSIGN_OR_RETURN(info.stage, r.string_attr("/", "stage"));
  ASCPROF_ASSIGN_OR_RETURN(info.schema_version, r.int_attr("/", "schema_version"));
  ASCPROF_ASSIGN_OR_RETURN(info.inputs, r.read_fingerprints("/"));
  return info;
}

}  // namespace ascprof::store
