// torch.save'd int64 tensors: the zip container, then a small pickle machine (torch_pt.hpp).
#include "torch_pt.hpp"

#include <cstring>
#include <map>

#include "ascprof/common/files.hpp"

namespace ascprof::importers::detail {

namespace fs = std::filesystem;

namespace {

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The stored entries of a zip: name -> bytes (views into the mapped file).
class ZipEntries {
 public:
  Status open(std::string_view file, const std::string& label) {
    const auto* b = reinterpret_cast<const unsigned char*>(file.data());
    const size_t n = file.size();
    auto bad = [&label](const std::string& why) { return file_error(ErrorCode::kParse, label, "zip", why); };
    if (n < 22) return bad("too short for a zip (a torch.save file is one)");
    size_t eocd = n - 22;
    const size_t stop = n > 22 + 65535 ? n - 22 - 65535 : 0;
    while (le(b + eocd, 4) != 0x06054b50) {
      if (eocd == stop) return bad("no end-of-central-directory record (not a zip, or cut short)");
      --eocd;
    }
    const uint64_t count = le(b + eocd + 10, 2), cd_size = le(b + eocd + 12, 4), cd_off = le(b + eocd + 16, 4);
    if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_off == 0xFFFFFFFF) return bad("a zip64 archive (over 4 GiB) is not read");
    if (cd_off + cd_size > n) return bad("central directory beyond the end of the file (cut short?)");
    size_t at = cd_off;
    for (uint64_t i = 0; i < count; ++i) {
      if (at + 46 > n || le(b + at, 4) != 0x02014b50) return bad("damaged central directory entry " + std::to_string(i));
      const uint64_t method = le(b + at + 10, 2), size = le(b + at + 20, 4), name_len = le(b + at + 28, 2);
      const uint64_t extra_len = le(b + at + 30, 2), comment_len = le(b + at + 32, 2), local = le(b + at + 42, 4);
      if (at + 46 + name_len > n) return bad("damaged central directory entry " + std::to_string(i));
      std::string name(file.substr(at + 46, name_len));
      at += 46 + name_len + extra_len + comment_len;
      if (local + 30 > n || le(b + local, 4) != 0x04034b50) return bad(name + ": damaged local header");
      const uint64_t data = local + 30 + le(b + local + 26, 2) + le(b + local + 28, 2);
      if (method != 0) return bad(name + ": compressed entry (torch.save stores entries uncompressed)");
      if (data + size > n) return bad(name + ": data beyond the end of the file (cut short?)");
      entries_[std::move(name)] = file.substr(data, size);
    }
    return {};
  }
  // The entry whose name ends with `suffix` (torch prefixes every name with "<archive>/").
  const std::string_view* find_suffix(std::string_view suffix, std::string* prefix) const {
    for (const auto& [name, bytes] : entries_)
      if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        *prefix = name.substr(0, name.size() - suffix.size());
        return &bytes;
      }
    return nullptr;
  }
  const std::string_view* find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, std::string_view> entries_;
};

// A pickled value, as far as torch.save's tensors need.
struct Py {
  enum Kind : uint8_t { kNone, kMark, kInt, kStr, kTuple, kList, kDict, kGlobal, kStorage, kTensor, kOther } kind = kNone;
  int64_t i = 0;             // int; tensor: storage offset
  std::string a, b;          // str: a; global: module a, name b; storage & tensor: key a, storage type b
  std::vector<Py> items;     // tuple / list; tensor: {size tuple, stride tuple}
};

Py make(Py::Kind kind, int64_t i = 0, std::string a = {}, std::string b = {}) {
  Py p;
  p.kind = kind;
  p.i = i;
  p.a = std::move(a);
  p.b = std::move(b);
  return p;
}

class Unpickler {
 public:
  Unpickler(std::string_view bytes, std::string label) : p_(bytes), label_(std::move(label)) {}

  Result<Py> run() {
    while (at_ < p_.size()) {
      const auto op = static_cast<unsigned char>(p_[at_++]);
      switch (op) {
        case 0x80: ASCPROF_RETURN_IF_ERROR(skip(1)); break;                 // PROTO
        case 0x95: ASCPROF_RETURN_IF_ERROR(skip(8)); break;                 // FRAME
        case ']': push(make(Py::kList)); break;                                  // EMPTY_LIST
        case ')': push(make(Py::kTuple)); break;                                 // EMPTY_TUPLE
        case '}': push(make(Py::kDict)); break;                                  // EMPTY_DICT
        case '(': push(make(Py::kMark)); break;                                  // MARK
        case 'N': push(make(Py::kNone)); break;
        case 0x88: case 0x89: push(make(Py::kInt, op == 0x88 ? 1 : 0)); break;   // NEWTRUE / NEWFALSE
        case 'q': { uint64_t k = 0; ASCPROF_RETURN_IF_ERROR(uint(1, &k)); ASCPROF_RETURN_IF_ERROR(put(k)); break; }
        case 'r': { uint64_t k = 0; ASCPROF_RETURN_IF_ERROR(uint(4, &k)); ASCPROF_RETURN_IF_ERROR(put(k)); break; }
        case 0x94: ASCPROF_RETURN_IF_ERROR(put(memo_.size())); break;       // MEMOIZE
        case 'h': { uint64_t k = 0; ASCPROF_RETURN_IF_ERROR(uint(1, &k)); ASCPROF_RETURN_IF_ERROR(get(k)); break; }
        case 'j': { uint64_t k = 0; ASCPROF_RETURN_IF_ERROR(uint(4, &k)); ASCPROF_RETURN_IF_ERROR(get(k)); break; }
        case 'c': {                                                          // GLOBAL module\nname\n
          Py g = make(Py::kGlobal);
          ASCPROF_RETURN_IF_ERROR(line(&g.a));
          ASCPROF_RETURN_IF_ERROR(line(&g.b));
          push(std::move(g));
          break;
        }
        case 0x93: {                                                         // STACK_GLOBAL
          Py name, module;
          ASCPROF_RETURN_IF_ERROR(pop(&name));
          ASCPROF_RETURN_IF_ERROR(pop(&module));
          push(make(Py::kGlobal, 0, module.a, name.a));
          break;
        }
        case 'X': case 'T': case 'B': { uint64_t n = 0; ASCPROF_RETURN_IF_ERROR(uint(4, &n)); ASCPROF_RETURN_IF_ERROR(str(n)); break; }
        case 0x8c: case 'U': case 'C': { uint64_t n = 0; ASCPROF_RETURN_IF_ERROR(uint(1, &n)); ASCPROF_RETURN_IF_ERROR(str(n)); break; }
        case 'J': { uint64_t v = 0; ASCPROF_RETURN_IF_ERROR(uint(4, &v)); push(make(Py::kInt, static_cast<int32_t>(v))); break; }
        case 'K': { uint64_t v = 0; ASCPROF_RETURN_IF_ERROR(uint(1, &v)); push(make(Py::kInt, static_cast<int64_t>(v))); break; }
        case 'M': { uint64_t v = 0; ASCPROF_RETURN_IF_ERROR(uint(2, &v)); push(make(Py::kInt, static_cast<int64_t>(v))); break; }
        case 0x8a: {                                                         // LONG1: n bytes, two's complement
          uint64_t n = 0, v = 0;
          ASCPROF_RETURN_IF_ERROR(uint(1, &n));
          if (n > 8) return bad("an integer wider than 64 bits");
          if (n > 0) ASCPROF_RETURN_IF_ERROR(uint(static_cast<int>(n), &v));
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
          push(make(Py::kInt, static_cast<int64_t>(v)));
          break;
        }
        case 'G': ASCPROF_RETURN_IF_ERROR(skip(8)); push(make(Py::kOther)); break;   // BINFLOAT
        case 't': case 'l': {                                                // TUPLE / LIST from the mark
          Py t = make(op == 't' ? Py::kTuple : Py::kList);
          ASCPROF_RETURN_IF_ERROR(to_mark(&t.items));
          push(std::move(t));
          break;
        }
        case 0x85: case 0x86: case 0x87: {                                   // TUPLE1..3
          Py t = make(Py::kTuple);
          t.items.resize(op - 0x84);
          for (size_t k = t.items.size(); k-- > 0;) ASCPROF_RETURN_IF_ERROR(pop(&t.items[k]));
          push(std::move(t));
          break;
        }
        case 'a': {                                                          // APPEND
          Py v;
          ASCPROF_RETURN_IF_ERROR(pop(&v));
          if (stack_.empty() || stack_.back().kind != Py::kList) return bad("APPEND to a non-list");
          stack_.back().items.push_back(std::move(v));
          break;
        }
        case 'e': {                                                          // APPENDS
          std::vector<Py> vs;
          ASCPROF_RETURN_IF_ERROR(to_mark(&vs));
          if (stack_.empty() || stack_.back().kind != Py::kList) return bad("APPENDS to a non-list");
          for (auto& v : vs) stack_.back().items.push_back(std::move(v));
          break;
        }
        case 's': { Py k, v; ASCPROF_RETURN_IF_ERROR(pop(&v)); ASCPROF_RETURN_IF_ERROR(pop(&k)); break; }  // SETITEM
        case 'u': { std::vector<Py> kv; ASCPROF_RETURN_IF_ERROR(to_mark(&kv)); break; }                     // SETITEMS
        case 'b': { Py state; ASCPROF_RETURN_IF_ERROR(pop(&state)); break; }                                // BUILD
        case 'Q': ASCPROF_RETURN_IF_ERROR(persistent()); break;                                             // BINPERSID
        case 'R': ASCPROF_RETURN_IF_ERROR(reduce()); break;                                                 // REDUCE
        case 0x81: { Py args, cls; ASCPROF_RETURN_IF_ERROR(pop(&args)); ASCPROF_RETURN_IF_ERROR(pop(&cls)); push(make(Py::kOther)); break; }
        case '.': {                                                          // STOP
          Py top;
          ASCPROF_RETURN_IF_ERROR(pop(&top));
          return top;
        }
        default: {
          char buf[64];
          std::snprintf(buf, sizeof buf, "unsupported pickle opcode 0x%02x", op);
          return bad(buf);
        }
      }
      if (stack_.size() > kMaxStack) return bad("pickle stack too deep");
    }
    return bad("pickle ends without STOP (cut short?)");
  }

 private:
  static constexpr size_t kMaxStack = 1u << 16;

  Status bad(const std::string& why) const {
    return file_error(ErrorCode::kParse, label_, "data.pkl byte " + std::to_string(at_), why);
  }
  Status skip(size_t n) {
    if (at_ + n > p_.size()) return bad("pickle cut short");
    at_ += n;
    return {};
  }
  Status uint(int n, uint64_t* v) {
    if (at_ + static_cast<size_t>(n) > p_.size()) return bad("pickle cut short");
    *v = le(reinterpret_cast<const unsigned char*>(p_.data() + at_), n);
    at_ += static_cast<size_t>(n);
    return {};
  }
  Status str(uint64_t n) {
    if (n > p_.size() - at_) return bad("string beyond the end of the pickle");
    push(make(Py::kStr, 0, std::string(p_.substr(at_, n))));
    at_ += n;
    return {};
  }
  Status line(std::string* out) {
    const size_t nl = p_.find('\n', at_);
    if (nl == std::string_view::npos) return bad("GLOBAL without its newline");
    *out = std::string(p_.substr(at_, nl - at_));
    at_ = nl + 1;
    return {};
  }
  void push(Py v) { stack_.push_back(std::move(v)); }
  Status pop(Py* v) {
    if (stack_.empty() || stack_.back().kind == Py::kMark) return bad("pickle stack underflow");
    *v = std::move(stack_.back());
    stack_.pop_back();
    return {};
  }
  Status to_mark(std::vector<Py>* out) {
    size_t m = stack_.size();
    while (m > 0 && stack_[m - 1].kind != Py::kMark) --m;
    if (m == 0) return bad("no MARK");
    out->assign(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)), std::make_move_iterator(stack_.end()));
    stack_.resize(m - 1);
    return {};
  }
  Status put(uint64_t k) {
    if (stack_.empty()) return bad("memo of an empty stack");
    if (k > kMaxStack) return bad("memo index too large");
    if (memo_.size() <= k) memo_.resize(k + 1);
    memo_[k] = stack_.back();
    return {};
  }
  Status get(uint64_t k) {
    if (k >= memo_.size()) return bad("memo index " + std::to_string(k) + " never stored");
    push(memo_[k]);
    return {};
  }
  // ('storage', <torch.LongStorage>, key, location, numel) -> a storage reference
  Status persistent() {
    Py pid;
    ASCPROF_RETURN_IF_ERROR(pop(&pid));
    if (pid.kind != Py::kTuple || pid.items.size() < 3 || pid.items[0].a != "storage" || pid.items[1].kind != Py::kGlobal ||
        pid.items[2].kind != Py::kStr)
      return bad("a persistent id that is not a torch storage");
    push(make(Py::kStorage, 0, pid.items[2].a, pid.items[1].b));
    return {};
  }
  Status reduce() {
    Py args, fn;
    ASCPROF_RETURN_IF_ERROR(pop(&args));
    ASCPROF_RETURN_IF_ERROR(pop(&fn));
    if (fn.kind == Py::kGlobal && fn.a == "torch._utils" && (fn.b == "_rebuild_tensor_v2" || fn.b == "_rebuild_tensor")) {
      if (args.kind != Py::kTuple || args.items.size() < 4 || args.items[0].kind != Py::kStorage ||
          args.items[1].kind != Py::kInt || args.items[2].kind != Py::kTuple || args.items[3].kind != Py::kTuple)
        return bad("torch._utils." + fn.b + " with unexpected arguments");
      Py t = make(Py::kTensor, args.items[1].i, args.items[0].a, args.items[0].b);
      t.items = {std::move(args.items[2]), std::move(args.items[3])};
      push(std::move(t));
    } else if (fn.kind == Py::kGlobal && fn.a == "collections" && fn.b == "OrderedDict") {
      push(make(Py::kDict));
    } else {
      push(make(Py::kOther));
    }
    return {};
  }

  std::string_view p_;
  size_t at_ = 0;
  std::string label_;
  std::vector<Py> stack_, memo_;
};

}  // namespace

Result<std::vector<Int64Tensor>> read_torch_int64_list(const fs::path& path) {
  const std::string label = path.string();
  ASCPROF_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  ZipEntries zip;
  ASCPROF_RETURN_IF_ERROR(zip.open(file.data(), label));
  std::string prefix;
  const std::string_view* pkl = zip.find_suffix("data.pkl", &prefix);
  if (pkl == nullptr) return file_error(ErrorCode::kParse, label, "zip", "no data.pkl (not a torch.save file)");
  if (const std::string_view* order = zip.find(prefix + "byteorder"); order != nullptr && order->substr(0, 6) != "little")
    return file_error(ErrorCode::kParse, label, prefix + "byteorder", "big-endian storages are not read");
  ASCPROF_ASSIGN_OR_RETURN(Py top, Unpickler(*pkl, label).run());
  std::vector<Py> tensors;
  if (top.kind == Py::kTensor) tensors.push_back(std::move(top));
  else if (top.kind == Py::kList || top.kind == Py::kTuple) tensors = std::move(top.items);
  else return file_error(ErrorCode::kParse, label, "data.pkl", "holds neither a tensor nor a list of tensors");
  std::vector<Int64Tensor> out;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Py& t = tensors[k];
    const std::string where = "tensor " + std::to_string(k);
    if (t.kind != Py::kTensor) return file_error(ErrorCode::kParse, label, where, "not a tensor");
    if (t.b != "LongStorage") return file_error(ErrorCode::kParse, label, where, "a " + t.b + ", not int64 (LongStorage)");
    Int64Tensor x;
    int64_t count = 1;
    for (const Py& d : t.items[0].items) {
      if (d.kind != Py::kInt || d.i < 0 || d.i > (int64_t{1} << 31)) return file_error(ErrorCode::kParse, label, where, "bad size");
      x.shape.push_back(d.i);
      count *= d.i;
    }
    // row-major strides only: what torch.save writes for the collectors' row selections
    int64_t expect = 1;
    const auto& strides = t.items[1].items;
    if (strides.size() != x.shape.size()) return file_error(ErrorCode::kParse, label, where, "strides do not match the size");
    for (size_t d = strides.size(); d-- > 0;) {
      if (strides[d].kind != Py::kInt || (x.shape[d] > 1 && strides[d].i != expect))
        return file_error(ErrorCode::kParse, label, where, "not a contiguous row-major tensor");
      expect *= x.shape[d];
    }
    const std::string_view* bytes = zip.find(prefix + "data/" + t.a);
    if (bytes == nullptr) return file_error(ErrorCode::kParse, label, where, "storage " + t.a + " missing from the zip");
    if (t.i < 0 || static_cast<uint64_t>(t.i + count) * 8 > bytes->size())
      return file_error(ErrorCode::kParse, label, where, "storage " + t.a + " shorter than the tensor (cut short?)");
    x.data.resize(static_cast<size_t>(count));
    if (count > 0) std::memcpy(x.data.data(), bytes->data() + t.i * 8, static_cast<size_t>(count) * 8);  // little-endian host
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace ascprof::importers::detail
