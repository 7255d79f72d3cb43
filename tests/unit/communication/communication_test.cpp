#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "ascprof/common/files.hpp"
#include "ascprof/importers/communication.hpp"
#include "ascprof/model/kernel_table.hpp"
#include "support/test_support.hpp"

namespace ascprof::importers {
namespace {

namespace fs = std::filesystem;
using model::Transport;
using testing::real_fixtures_dir;
using testing::ScratchDir;
using testing::write_text;

size_t tr(Transport t) { return static_cast<size_t>(t); }

struct Imported {
  StringPool pool;
  model::CommStatTable table;
  Stats stats;
  Status status;
};

void import_file(const fs::path& p, Imported* out) { out->status = import_communication(p, out->pool, out->table, out->stats); }

void import_text(std::string_view json, Imported* out) {
  out->status = import_communication_text(json, "mem/communication.json", out->pool, out->table, out->stats);
}

fs::path comm_path(std::string_view root, std::string_view rank_dir) {
  return real_fixtures_dir() / root / rank_dir / "ASCEND_PROFILER_OUTPUT" / "communication.json";
}

TEST(CommOpKind, NamesOfEveryEra) {
  EXPECT_EQ(comm_op_kind("hcom_allReduce__586_0_1"), "allreduce");
  EXPECT_EQ(comm_op_kind("hcom_reduceScatter__483_4"), "reducescatter");  // torch_npu's regex says "reduce"
  EXPECT_EQ(comm_op_kind("hcom_allGather__693_1"), "allgather");
  EXPECT_EQ(comm_op_kind("hcom_batchSendRecv__128_2_1"), "batchsendrecv");
  EXPECT_EQ(comm_op_kind("hcom_alltoallv__1_2_1"), "alltoallv");
  EXPECT_EQ(comm_op_kind("hcom_send__822_0"), "send");
  EXPECT_EQ(comm_op_kind("hcom_receive__822_1"), "receive");
  EXPECT_EQ(comm_op_kind("hcom_reduceScatter_AicpuKernel_503_490_1"), "reducescatter");
  EXPECT_EQ(comm_op_kind("hcom_allReduceAivKernel__612_4_1"), "allreduce");
  EXPECT_EQ(comm_op_kind("hcom_allGather_AivKernel"), "allgather");
  EXPECT_EQ(comm_op_kind("MatmulAllReduceAicpu"), "mc2");
  EXPECT_EQ(comm_op_kind("AllGatherMatmul_12"), "mc2");
  EXPECT_EQ(comm_op_kind("MoeDistributeDispatch"), "mc2");
  EXPECT_EQ(comm_op_kind("Total Op Info"), "");
  EXPECT_EQ(comm_op_kind("SomethingElse"), "other");
  EXPECT_EQ(comm_op_kind("hcom___1"), "other");
}

// Values below were read from the fixture file with Python's json module (json.load, then
// d["step50"]["collective"][key]) and copied; ns times are the decimal text times 1000.
TEST(CommunicationReal, E2Level1Rank0AllRowsAndOneOpExact) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Imported im;
  import_file(comm_path("e2-cnn-level1", "rank0_ascend_pt"), &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  const auto& t = im.table;
  ASSERT_EQ(t.size(), 5u);  // step50: 4 allReduce ops + Total Op Info; p2p is empty
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(t.step[i], 50);
    EXPECT_EQ(t.is_p2p[i], 0);
    EXPECT_EQ(t.is_total[i], i == 4 ? 1 : 0);
  }
  EXPECT_EQ(im.pool.view(t.op_name[0]), "hcom_allReduce__586_0_1");
  EXPECT_EQ(im.pool.view(t.op_name[3]), "hcom_allReduce__586_3_1");
  EXPECT_EQ(im.pool.view(t.op_name[4]), "Total Op Info");
  EXPECT_EQ(t.group_hash[0], 17522688603477080586ULL);  // > INT64_MAX: must stay unsigned
  EXPECT_EQ(t.group_hash[4], 0u);
  EXPECT_EQ(im.pool.view(t.op_kind[0]), "allreduce");
  EXPECT_EQ(im.pool.view(t.op_kind[4]), "");
  // hcom_allReduce__586_0_1
  EXPECT_EQ(t.start_ns[0], 1736408883732241500LL);  // "1736408883732241.5" exactly
  EXPECT_EQ(t.start_ns[1], 1736408883811334800LL);  // "1736408883811334.8": a double would give ...334750 or so
  EXPECT_DOUBLE_EQ(t.elapse_ms[0], 79.08952021875);
  EXPECT_DOUBLE_EQ(t.transit_ms[0], 0.23918478124999998);
  EXPECT_DOUBLE_EQ(t.wait_ms[0], 5.64663284375);
  EXPECT_DOUBLE_EQ(t.sync_ms[0], 5.61569221875);
  EXPECT_DOUBLE_EQ(t.idle_ms[0], 73.20370259375);
  EXPECT_DOUBLE_EQ(t.wait_ratio[0], 0.9594);
  EXPECT_DOUBLE_EQ(t.sync_ratio[0], 0.9591);
  const auto& hccs = t.transport[tr(Transport::kHccs)];
  EXPECT_DOUBLE_EQ(hccs.size_mb[0], 28.647232000000002);
  EXPECT_DOUBLE_EQ(hccs.time_ms[0], 1.8168363437500001);
  EXPECT_DOUBLE_EQ(hccs.bandwidth_gbps[0], 15.7676);
  EXPECT_DOUBLE_EQ(hccs.large_packet_ratio[0], 0.0);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kSdma)].bandwidth_gbps[0], 15.7676);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kRdma)].size_mb[0], 0.0);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kSio)].time_ms[0], 0.0);  // E2 writes SIO, zero-filled
  // Total row: no start, no bandwidth / large packet ratio (NaN), sizes and times present.
  EXPECT_EQ(t.start_ns[4], model::kAbsentI64);
  EXPECT_TRUE(std::isnan(hccs.bandwidth_gbps[4]));
  EXPECT_TRUE(std::isnan(hccs.large_packet_ratio[4]));
  EXPECT_FALSE(std::isnan(hccs.size_mb[4]));
  // A clean real file leaves no warnings behind.
  EXPECT_EQ(im.stats.count(Stat::comm_missing_key), 0u);
  EXPECT_EQ(im.stats.count(Stat::comm_bad_value), 0u);
  EXPECT_EQ(im.stats.count(Stat::comm_transport_absent), 0u);
  EXPECT_EQ(im.stats.count(Stat::comm_unexpected_key), 0u);
}

TEST(CommunicationReal, E2Level2Rank1LastOpAndTotal) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Imported im;
  import_file(comm_path("e2-cnn-level2", "rank1_ascend_pt"), &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  const auto& t = im.table;
  ASSERT_EQ(t.size(), 5u);
  // hcom_allReduce__271_3_1@11022204950826225271 (read with Python json, see above)
  EXPECT_EQ(im.pool.view(t.op_name[3]), "hcom_allReduce__271_3_1");
  EXPECT_EQ(t.group_hash[3], 11022204950826225271ULL);
  EXPECT_EQ(t.start_ns[3], 1736412474848138500LL);
  EXPECT_DOUBLE_EQ(t.elapse_ms[3], 8.827816375);
  EXPECT_DOUBLE_EQ(t.wait_ms[3], 0.016780312500000002);
  EXPECT_DOUBLE_EQ(t.sync_ms[3], 2e-05);
  EXPECT_DOUBLE_EQ(t.sync_ratio[3], 0.0001);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kHccs)].bandwidth_gbps[3], 8.4149);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kHccs)].size_mb[3], 17.267200000000003);
  // Total Op Info
  EXPECT_EQ(t.is_total[4], 1);
  EXPECT_DOUBLE_EQ(t.elapse_ms[4], 97.455327125);
  EXPECT_DOUBLE_EQ(t.wait_ratio[4], 0.6885);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kHccs)].size_mb[4], 427.59609599999993);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kHccs)].time_ms[4], 28.345726187500002);
}

TEST(CommunicationReal, EveryE2FileHasFiveRowsInStep50) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  for (const char* root : {"e2-cnn-level1", "e2-cnn-level2"}) {
    for (const char* rank : {"rank0_ascend_pt", "rank1_ascend_pt"}) {
      Imported im;
      import_file(comm_path(root, rank), &im);
      ASSERT_TRUE(im.status.ok()) << root << "/" << rank << ": " << im.status.to_string();
      ASSERT_EQ(im.table.size(), 5u) << root << "/" << rank;
      size_t ops = 0, totals = 0;
      for (size_t i = 0; i < im.table.size(); ++i) {
        EXPECT_EQ(im.table.step[i], 50);
        (im.table.is_total[i] ? totals : ops)++;
      }
      EXPECT_EQ(ops, 4u);
      EXPECT_EQ(totals, 1u);
    }
  }
}

TEST(CommunicationReal, E1TwoSectionsKindsAndMissingSio) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Imported im;
  import_file(comm_path("e1-2023-two-rank", "test_rank_0"), &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  const auto& t = im.table;
  // step2: collective = 27 ops + Total Op Info, p2p = 1 send + Total Op Info (counted with Python json).
  ASSERT_EQ(t.size(), 30u);
  std::map<std::string, int> kinds;
  size_t p2p = 0, totals = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t.step[i], 2);
    p2p += t.is_p2p[i];
    totals += t.is_total[i];
    if (!t.is_total[i]) kinds[std::string(im.pool.view(t.op_kind[i]))]++;
    // 2023 files have no SIO entry: NaN, not a made-up zero.
    EXPECT_TRUE(std::isnan(t.transport[tr(Transport::kSio)].size_mb[i]));
  }
  EXPECT_EQ(p2p, 2u);
  EXPECT_EQ(totals, 2u);
  EXPECT_EQ(kinds["allgather"], 10);
  EXPECT_EQ(kinds["reducescatter"], 9);
  EXPECT_EQ(kinds["allreduce"], 6);
  EXPECT_EQ(kinds["broadcast"], 2);
  EXPECT_EQ(kinds["send"], 1);
  EXPECT_EQ(im.stats.count(Stat::comm_transport_absent), 30u);
  EXPECT_EQ(im.stats.count(Stat::comm_missing_key), 0u);
  // p2p comes first in the file: hcom_send__822_0@13337953553061386822
  EXPECT_EQ(im.pool.view(t.op_name[0]), "hcom_send__822_0");
  EXPECT_EQ(t.is_p2p[0], 1);
  EXPECT_EQ(t.group_hash[0], 13337953553061386822ULL);
  EXPECT_EQ(t.start_ns[0], 1695115378810042500LL);
  EXPECT_DOUBLE_EQ(t.elapse_ms[0], 0.89648691015625);
  EXPECT_DOUBLE_EQ(t.idle_ms[0], 0.032671503906250066);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kRdma)].bandwidth_gbps[0], 24.2778);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kRdma)].large_packet_ratio[0], 1.0);
  EXPECT_EQ(im.pool.view(t.op_name[2]), "hcom_broadcast__483_0");
  EXPECT_EQ(t.group_hash[2], 9350434047717501483ULL);
}

TEST(CommunicationBroken, TruncatedFileIsParseErrorNamingFileAndByte) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  auto full = read_file(comm_path("e2-cnn-level1", "rank0_ascend_pt"));
  ASSERT_TRUE(full.ok());
  ScratchDir dir("comm");
  const fs::path p = dir / "communication.json";
  write_text(p, std::string_view(*full).substr(0, full->size() / 2));
  Imported im;
  import_file(p, &im);
  ASSERT_FALSE(im.status.ok());
  EXPECT_EQ(im.status.code(), ErrorCode::kParse);
  EXPECT_NE(im.status.message().find(p.string()), std::string::npos) << im.status.message();
  EXPECT_NE(im.status.message().find(":byte "), std::string::npos) << im.status.message();
  EXPECT_NE(im.status.message().find("truncated?"), std::string::npos) << im.status.message();
  EXPECT_EQ(im.table.size(), 0u);  // nothing half-imported
}

TEST(CommunicationBroken, TruncatedAfterEarlierImportLeavesTableUnchanged) {
  Imported im;
  import_text(R"J({"step1": {"collective": {"hcom_allReduce__1_0_1@1": {"Communication Time Info": {"Start Timestamp(us)": 1.5}}}}})J",
              &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  ASSERT_EQ(im.table.size(), 1u);
  import_text(R"J({"step1": {"collective": {"hcom_allReduce__1_0_1@1": {"Communication Time Info": {"Start Timesta)J", &im);
  ASSERT_FALSE(im.status.ok());
  EXPECT_EQ(im.status.code(), ErrorCode::kParse);
  EXPECT_NE(im.status.message().find("mem/communication.json:byte "), std::string::npos) << im.status.message();
  EXPECT_EQ(im.table.size(), 1u);
  EXPECT_EQ(im.table.transport[tr(Transport::kSio)].size_mb.size(), 1u);
}

TEST(CommunicationBroken, EmptyAndNonObjectDocuments) {
  Imported a;
  import_text("", &a);
  EXPECT_EQ(a.status.code(), ErrorCode::kParse) << a.status.to_string();
  Imported b;
  import_text("[1, 2]", &b);
  EXPECT_EQ(b.status.code(), ErrorCode::kSchema) << b.status.to_string();
  EXPECT_NE(b.status.message().find("top level is not a JSON object"), std::string::npos);
  Imported c;
  ScratchDir dir("comm");
  c.status = import_communication(dir / "nope.json", c.pool, c.table, c.stats);
  EXPECT_EQ(c.status.code(), ErrorCode::kIo);
  EXPECT_NE(c.status.message().find("nope.json"), std::string::npos);
}

TEST(CommunicationBroken, MissingKeysAreCountedAndReadAsZero) {
  Imported im;
  import_text(R"J({"step": {"p2p": {"hcom_send__1_0_1@77": {
      "Communication Time Info": {"Start Timestamp(us)": 100, "Elapse Time(ms)": 2.0},
      "Communication Bandwidth Info": {"RDMA": {"Transit Size(MB)": 1.0}}}}}})J",
              &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  const auto& t = im.table;
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.step[0], -1);  // plain "step"
  EXPECT_EQ(t.is_p2p[0], 1);
  EXPECT_EQ(t.group_hash[0], 77u);
  EXPECT_EQ(t.start_ns[0], 100000);
  EXPECT_DOUBLE_EQ(t.elapse_ms[0], 2.0);
  EXPECT_DOUBLE_EQ(t.wait_ms[0], 0.0);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kRdma)].size_mb[0], 1.0);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kRdma)].bandwidth_gbps[0], 0.0);
  EXPECT_TRUE(std::isnan(t.transport[tr(Transport::kHccs)].size_mb[0]));
  // 6 missing time keys + 3 missing RDMA keys
  EXPECT_EQ(im.stats.count(Stat::comm_missing_key), 9u);
  EXPECT_EQ(im.stats.count(Stat::comm_transport_absent), 4u);  // HCCS, PCIE, SDMA, SIO
  ASSERT_FALSE(im.stats.samples(Stat::comm_missing_key).empty());
  EXPECT_NE(im.stats.samples(Stat::comm_missing_key)[0].find(
                "mem/communication.json:key step.p2p.hcom_send__1_0_1@77.Communication Time Info: no \"Transit Time(ms)\""),
            std::string::npos)
      << im.stats.samples(Stat::comm_missing_key)[0];
}

TEST(CommunicationBroken, OpWithoutAnyBlocksAndMissingStart) {
  Imported im;
  import_text(R"J({"step3": {"collective": {"hcom_allGather__5_1_1@5": {}}}})J", &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  ASSERT_EQ(im.table.size(), 1u);
  EXPECT_EQ(im.table.start_ns[0], model::kAbsentI64);
  EXPECT_DOUBLE_EQ(im.table.elapse_ms[0], 0.0);
  EXPECT_TRUE(std::isnan(im.table.transport[0].size_mb[0]));
  // no Time Info block + no Bandwidth block; the keys inside a missing block are not counted again
  EXPECT_EQ(im.stats.count(Stat::comm_missing_key), 2u);
}

TEST(CommunicationBroken, WrongTypesAreCounted) {
  Imported im;
  import_text(R"J({"step4": {"collective": {"hcom_allReduce__9_0_1@9": {
      "Communication Time Info": {"Start Timestamp(us)": "1736408883732241.5", "Elapse Time(ms)": "3.5",
        "Transit Time(ms)": null, "Wait Time(ms)": [1], "Synchronization Time(ms)": {"x": 1},
        "Idle Time(ms)": true, "Wait Time Ratio": 0.5, "Synchronization Time Ratio": 0.25},
      "Communication Bandwidth Info": {"RDMA": 7, "HCCS": {"Transit Size(MB)": "abc", "Transit Time(ms)": 1,
        "Bandwidth(GB/s)": 2, "Large Packet Ratio": 0}}},
      "hcom_allReduce__9_1_1@notanumber": {"Communication Time Info": {"Start Timestamp(us)": 5,
        "Elapse Time(ms)": 1, "Transit Time(ms)": 1, "Wait Time(ms)": 1, "Synchronization Time(ms)": 1,
        "Idle Time(ms)": 1, "Wait Time Ratio": 1, "Synchronization Time Ratio": 1}},
      "hcom_broadcast__9_2_1@9": 5,
      "hcom_broadcast__9_3_1@9": {"Communication Time Info": {}, "Communication Bandwidth Info": "none"}},
    "weird": 12, "step5": [1, 2], "step6": {"other": {}}}})J",
              &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  const auto& t = im.table;
  ASSERT_EQ(t.size(), 3u);  // the op whose value is 5 gives no row
  EXPECT_EQ(t.start_ns[0], 1736408883732241500LL);  // numeric string still exact
  EXPECT_DOUBLE_EQ(t.elapse_ms[0], 3.5);
  EXPECT_DOUBLE_EQ(t.transit_ms[0], 0.0);
  EXPECT_DOUBLE_EQ(t.sync_ms[0], 0.0);
  EXPECT_DOUBLE_EQ(t.wait_ratio[0], 0.5);
  EXPECT_TRUE(std::isnan(t.transport[tr(Transport::kRdma)].size_mb[0]));  // 7 is not an object
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kHccs)].size_mb[0], 0.0);
  EXPECT_DOUBLE_EQ(t.transport[tr(Transport::kHccs)].bandwidth_gbps[0], 2.0);
  EXPECT_EQ(t.group_hash[1], 0u);
  EXPECT_EQ(im.pool.view(t.op_name[2]), "hcom_broadcast__9_3_1");
  for (size_t k = 0; k < model::kTransportCount; ++k) EXPECT_TRUE(std::isnan(t.transport[k].time_ms[2]));
  // start string, elapse string, transit null, wait array, sync object, idle bool, HCCS size "abc", bad hash
  EXPECT_EQ(im.stats.count(Stat::comm_bad_value), 8u);
  // RDMA not an object, op value 5, Bandwidth Info "none"; "weird", "step5" and "step6" sit where
  // only collective/p2p belong
  EXPECT_EQ(im.stats.count(Stat::comm_unexpected_key), 6u);
}

TEST(LinkGroups, HashesMapToCommunicators) {
  Imported im;
  import_text(R"J({"step1": {"collective": {
      "hcom_allReduce__612_4_1@5862276093215481612": {},
      "hcom_allReduce__612_5_1@5862276093215481612": {},
      "hcom_allGather__128_0_1@3985310405473756128": {},
      "hcom_broadcast__999_0_1@1234": {},
      "hcom_broadcast__999_1_1@1234": {},
      "Total Op Info": {}}}})J",
              &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  model::ProfilerMetadata meta;
  // Hashes as documented in input-formats.md §1 (double_hash of the comm name).
  meta.groups.push_back({"group_name_0", "dp", 0, {0, 2}, 5862276093215481612ULL});
  meta.groups.push_back({"group_name_19", "pp", 1, {1, 3}, 3985310405473756128ULL});
  Stats stats;
  auto link = link_groups(im.table, meta, stats, "rank3/communication.json");
  ASSERT_EQ(link.size(), 6u);
  EXPECT_EQ(link[0], 0);
  EXPECT_EQ(link[1], 0);
  EXPECT_EQ(link[2], 1);
  EXPECT_EQ(link[3], -1);
  EXPECT_EQ(link[4], -1);
  EXPECT_EQ(link[5], -1);  // Total Op Info: no hash, not counted
  EXPECT_EQ(stats.count(Stat::comm_unknown_group_hash), 1u);  // one distinct unknown hash
  ASSERT_EQ(stats.samples(Stat::comm_unknown_group_hash).size(), 1u);
  EXPECT_NE(stats.samples(Stat::comm_unknown_group_hash)[0].find("rank3/communication.json: @1234 matches none of the 2"),
            std::string::npos);
}

TEST(LinkGroups, RealE2FileWithoutGroupInfoCountsEachHashOnce) {
  ASCPROF_REQUIRE_REAL_FIXTURES();
  Imported im;
  import_file(comm_path("e2-cnn-level1", "rank1_ascend_pt"), &im);
  ASSERT_TRUE(im.status.ok()) << im.status.to_string();
  model::ProfilerMetadata empty;  // the E2 level samples' metadata has only ENV_VARIABLES
  Stats stats;
  auto link = link_groups(im.table, empty, stats);
  for (int32_t g : link) EXPECT_EQ(g, -1);
  EXPECT_EQ(stats.count(Stat::comm_unknown_group_hash), 1u);
}

}  // namespace
}  // namespace ascprof::importers
