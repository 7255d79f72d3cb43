// libFuzzer target: the communication.json importer (import_communication_text) and comm_op_kind.
//
// The whole input is the document. Besides sanitizer findings it checks that every column of the
// table has one value per row and that a failed import leaves the table unchanged.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ascprof/common/stats.hpp"
#include "ascprof/common/string_pool.hpp"
#include "ascprof/importers/communication.hpp"
#include "ascprof/model/comm_table.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  ascprof::Stats stats;
  ascprof::StringPool pool;
  ascprof::model::CommStatTable t;
  const ascprof::Status st = ascprof::importers::import_communication_text(text, "communication.json", pool, t, stats);
  const size_t n = t.size();
  if (!st.ok()) FUZZ_CHECK(n == 0, "failed import left rows behind");
  FUZZ_CHECK(t.is_p2p.size() == n && t.is_total.size() == n && t.op_name.size() == n, "row columns length");
  FUZZ_CHECK(t.group_hash.size() == n && t.op_kind.size() == n && t.start_ns.size() == n, "row columns length");
  FUZZ_CHECK(t.elapse_ms.size() == n && t.transit_ms.size() == n && t.wait_ms.size() == n, "time columns length");
  FUZZ_CHECK(t.sync_ms.size() == n && t.idle_ms.size() == n && t.wait_ratio.size() == n && t.sync_ratio.size() == n,
             "time columns length");
  for (const auto& tr : t.transport)
    FUZZ_CHECK(tr.size_mb.size() == n && tr.time_ms.size() == n && tr.bandwidth_gbps.size() == n &&
                   tr.large_packet_ratio.size() == n,
               "transport columns length");
  for (size_t i = 0; i < n; ++i) {
    FUZZ_CHECK(t.op_name[i] < pool.size() && t.op_kind[i] < pool.size(), "string id");
    (void)ascprof::importers::comm_op_kind(pool.view(t.op_name[i]));
  }
  // The kind classifier on raw bytes too (it sees arbitrary op names from the file).
  (void)ascprof::importers::comm_op_kind(text.substr(0, 256));
  return 0;
}
