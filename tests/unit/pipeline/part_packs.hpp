#pragma once
// Tests: the ranks' part packs a test writes (ranks/<id>.parts), each opened on first use (its
// folder created) and all committed together, as the rank job commits its own after its last part.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ascprof/common/status.hpp"
#include "ascprof/store/part_pack.hpp"

namespace ascprof::testing {

class PartPacks {
 public:
  store::PartPackWriter& at(const std::filesystem::path& path) {
    auto& w = packs_[path];
    if (!w) {
      w = std::make_unique<store::PartPackWriter>();
      std::filesystem::create_directories(path.parent_path());
      (void)w->open(path);  // an open error is kept and returned by commit()
    }
    return *w;
  }
  Status commit() {
    Status first;
    for (auto& [path, w] : packs_) {
      const Status st = w->commit();
      if (first.ok() && !st.ok()) first = st;
    }
    packs_.clear();
    return first;
  }
  /// One section of a committed pack.
  static Result<std::string> section(const std::filesystem::path& pack, std::string_view name) {
    auto r = store::PartPackReader::open(pack);
    if (!r.ok()) return r.status();
    return r->read(name);
  }

 private:
  std::map<std::filesystem::path, std::unique_ptr<store::PartPackWriter>> packs_;
};

}  // namespace ascprof::testing
