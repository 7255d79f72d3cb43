// Structure of generated captures as the segmentation / classify stages see it: the glm5_mtp scenario,
// split attention, the interior_island fault and the per-layer "blocks" ground truth, checked against
// the live knowledge/operator_taxonomy.rules (through the knowledge module).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/synth/synth.hpp"
#include "support/test_support.hpp"
#include "synth_test_util.hpp"

namespace ascprof::synth {
namespace {

namespace fs = std::filesystem;
using testutil::Json;
using Rows = std::vector<std::vector<std::string>>;
using Blocks = std::vector<std::string>;

constexpr size_t kColStep = 0, kColName = 5, kColType = 6, kColCore = 8;

struct Gen {
  SynthSummary summary;
  Json gt;
};

Gen gen(const SynthOptions& o) {
  auto r = generate_capture(o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  Gen g;
  g.summary = r.value();
  std::string err;
  EXPECT_TRUE(testutil::parse_json(testutil::slurp(g.summary.ground_truth), g.gt, err)) << err;
  return g;
}

SynthOptions opts(const std::string& scenario, const fs::path& out, int ranks, int steps, int layers = 0) {
  SynthOptions o;
  o.scenario = scenario;
  o.out_dir = out;
  o.ranks = ranks;
  o.steps = steps;
  o.layers = layers;
  o.seed = 11;
  return o;
}

Rows rows_of(const Gen& g, int rank) {
  const fs::path folder = g.summary.root / g.gt.at("ranks").items[static_cast<size_t>(rank)].at("folder").text;
  auto rows = testutil::parse_csv(testutil::slurp(folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"));
  if (!rows.empty()) rows.erase(rows.begin());
  return rows;
}

// The live knowledge/ taxonomy, so generated kernel names are checked against the rules in use.
struct Taxon {
  std::vector<std::string> categories, roles;
  bool has_category(std::string_view c) const { return std::find(categories.begin(), categories.end(), c) != categories.end(); }
  bool has_role(std::string_view r) const { return std::find(roles.begin(), roles.end(), r) != roles.end(); }
};

const knowledge::Knowledge& kb() {
  static const knowledge::Knowledge k = [] {
    auto r = knowledge::Knowledge::load(testing::knowledge_dir());
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return std::move(r).value();
  }();
  return k;
}

Taxon taxon(const std::vector<std::string>& r) {
  const knowledge::Taxon t = kb().taxonomy.classify(r[kColName], r[kColType], r[kColCore]);
  Taxon out;
  for (size_t i = 0; i < kb().vocab.categories().size(); ++i)
    if (t.categories.test(i)) out.categories.push_back(kb().vocab.categories()[i]);
  for (size_t i = 0; i < kb().vocab.roles().size(); ++i)
    if (t.roles.test(i)) out.roles.push_back(kb().vocab.roles()[i]);
  return out;
}

std::vector<int64_t> ints(const Json& a) {
  std::vector<int64_t> v;
  for (const Json& x : a.items) v.push_back(static_cast<int64_t>(x.num));
  return v;
}

Blocks strings(const Json& a) {
  Blocks v;
  for (const Json& x : a.items) v.push_back(x.text);
  return v;
}

const Json* fault(const Gen& g, const std::string& name) {
  for (const Json& f : g.gt.at("faults").items)
    if (f.at("name").text == name) return &f;
  return nullptr;
}

/// Data rows [first, last] of ProfilerStep `step` in a rank's kernel_details.
std::pair<size_t, size_t> step_rows(const Rows& rows, int step) {
  const std::string s = std::to_string(step);
  size_t a = rows.size(), b = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i][kColStep] == s) {
      a = std::min(a, i);
      b = i;
    }
  return {a, b};
}

/// The reference's §2.4 decomposition applied to rows [a, b] (island rows excluded).
Blocks blocks_of(const Rows& rows, size_t a, size_t b, int64_t skip_a, int64_t skip_b) {
  std::vector<Taxon> ev;
  for (size_t i = a; i <= b; ++i)
    if (static_cast<int64_t>(i) < skip_a || static_cast<int64_t>(i) > skip_b) ev.push_back(taxon(rows[i]));
  const int n = static_cast<int>(ev.size());
  int last_attn = -1, first_moe = -1, aicpu = 0;
  for (int i = 0; i < n; ++i) {
    const auto& t = ev[static_cast<size_t>(i)];
    if (t.has_role("attention") || t.has_role("attention_aux")) last_attn = i;
    if (t.has_role("moe") && first_moe < 0) first_moe = i;
    aicpu += t.has_role("aicpu");
  }
  if (n == 0) return {};
  if (last_attn < 0 && first_moe < 0) return {aicpu >= std::max(1, n / 2) ? "aicpu" : "ffn"};
  if (last_attn < 0) return {"moe"};
  if (first_moe < 0) return last_attn + 1 < n ? Blocks{"attention", "ffn"} : Blocks{"attention"};
  const int split = last_attn < first_moe ? (last_attn + first_moe) / 2 : first_moe - 1;
  Blocks out;
  if (split >= 0) out.push_back("attention");
  if (split + 1 < n) out.push_back("moe");
  return out;
}

/// Every rank, every step with layer rows: the blocks in ground truth equal the §2.4 decomposition of
/// the rows the ground truth assigns to each layer.
void check_blocks_against_rows(const Gen& g) {
  const int ranks = static_cast<int>(g.gt.at("rank_count").num);
  for (int r = 0; r < ranks; ++r) {
    const Rows rows = rows_of(g, r);
    const Json& rg = g.gt.at("ranks").items[static_cast<size_t>(r)];
    for (size_t si = 0; si < rg.at("steps").items.size(); ++si) {
      const Json& st = rg.at("steps").items[si];
      if (st.find("layer_first_row") == nullptr) continue;
      const auto first = ints(st.at("layer_first_row"));
      const Json& layers = g.gt.at("steps").items[si].at("layers");
      // pipeline ranks list their own stage's layers; others every layer
      std::vector<size_t> index;
      if (const Json* own = rg.find("layers")) {
        for (const Json& l : own->items) index.push_back(static_cast<size_t>(l.at("index").num));
      } else {
        for (size_t l = 0; l < layers.items.size(); ++l) index.push_back(l);
      }
      ASSERT_EQ(first.size(), index.size());
      int64_t ia = -1, ib = -1;
      if (const Json* isl = st.find("injected_island_rows")) {
        ia = static_cast<int64_t>(isl->items[0].num);
        ib = static_cast<int64_t>(isl->items[1].num);
      }
      const auto [sa, sb] = step_rows(rows, static_cast<int>(st.at("step").num));
      for (size_t l = 0; l < first.size(); ++l) {
        const size_t a = static_cast<size_t>(first[l]);
        const size_t b = l + 1 < first.size() ? static_cast<size_t>(first[l + 1]) - 1 : sb;
        ASSERT_GE(a, sa);
        const Blocks expected = st.find("layer_blocks") != nullptr ? strings(st.at("layer_blocks").items[l])
                                                                   : strings(layers.items[index[l]].at("blocks"));
        EXPECT_EQ(blocks_of(rows, a, b, ia, ib), expected) << "rank " << r << " step " << si << " layer " << l;
      }
    }
  }
}

std::map<std::string, int> type_counts(const Rows& rows, int step) {
  std::map<std::string, int> n;
  for (const auto& r : rows)
    if (r[kColStep] == std::to_string(step)) ++n[r[kColType]];
  return n;
}

// ---- glm5_mtp ----

TEST(SynthGlm5, FourStepsOf78MainAnd3Speculative) {
  testing::ScratchDir dir("synth_glm5");
  const Gen g = gen(opts("glm5_mtp", dir.path(), 2, 4));
  ASSERT_EQ(g.gt.at("steps").items.size(), 4u);
  for (const Json& s : g.gt.at("steps").items) {
    EXPECT_EQ(s.at("main_layers").num, 78);
    EXPECT_EQ(s.at("speculative_layers").num, 3);
    const Json& layers = s.at("layers");
    ASSERT_EQ(layers.items.size(), 81u);
    for (size_t l = 0; l < 81; ++l) {
      const Json& L = layers.items[l];
      const char* kind = l < 3 ? "dense" : l < 78 ? "moe" : "mtp";
      EXPECT_EQ(L.at("kind").text, kind) << l;
      EXPECT_EQ(L.at("role").text, l < 78 ? "main" : "speculative") << l;
      EXPECT_EQ(strings(L.at("blocks")), l < 3 ? Blocks({"attention", "ffn"}) : Blocks({"attention", "moe"})) << l;
    }
  }
  const Rows rows = rows_of(g, 0);
  for (int step = 1; step <= 4; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    auto n = type_counts(rows, step);
    EXPECT_EQ(n["MlaPrologV3"], 81);
    EXPECT_EQ(n["LightningIndexer"], 81);
    EXPECT_EQ(n["KvQuantSparseFlashAttention"], 81);
    EXPECT_EQ(n["BatchMatMulTransposeV2"], 81);
    EXPECT_EQ(n["ArgMaxV2"], 4) << "main body + 3 MTP layers";
    EXPECT_EQ(n["MoeGatingTopK"], 78);
    EXPECT_EQ(n["GroupedMatmul"], 156);
    EXPECT_EQ(n["MoeDistributeDispatchV2"], 78);
    EXPECT_EQ(n["DynamicQuant"], 81 * 2 + 3 * 2 + 78 * 3);
    EXPECT_EQ(n["QuantBatchMatmulV3"], 81 + 3 * 2 + 78 * 2);
    EXPECT_EQ(n["RmsNorm"], 1 + 3 * 3) << "first layer's head + 3 per MTP layer";
  }
  // every step has the same rows
  const Json& rg = g.gt.at("ranks").items[0];
  for (const Json& s : rg.at("steps").items) EXPECT_EQ(s.at("kernel_rows").num, rg.at("steps").items[0].at("kernel_rows").num);
  EXPECT_EQ(rows.size(), static_cast<size_t>(rg.at("counts").at("kernel_rows").num));

  // the taxonomy sees one attention.mla anchor per layer, the companions in order, 4 selection rows per step
  const auto [sa, sb] = step_rows(rows, 2);
  int mla = 0, selection = 0, mla_vup = 0;
  for (size_t i = sa; i <= sb; ++i) {
    const auto t = taxon(rows[i]);
    mla += t.has_category("attention.mla");
    mla_vup += t.has_category("attention.mla.v_up_proj");
    selection += t.has_role("selection");
  }
  EXPECT_EQ(mla, 81);
  EXPECT_EQ(mla_vup, 0) << "the V up-projection is attention.sparse_attn.v_up_proj only";
  EXPECT_EQ(selection, 4);
  const Json& st = rg.at("steps").items[1];
  const auto first = ints(st.at("layer_first_row"));
  const auto anchor = ints(st.at("layer_anchor_row"));
  for (size_t l = 0; l < 81; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const size_t a = static_cast<size_t>(first[l]);
    const size_t b = l + 1 < 81 ? static_cast<size_t>(first[l + 1]) - 1 : sb;
    const auto head = taxon(rows[a]);
    EXPECT_TRUE(head.has_role("normalization"));
    EXPECT_EQ(head.has_role("block_head"), l != 0 && l < 78) << rows[a][kColName];
    EXPECT_EQ(rows[static_cast<size_t>(anchor[l])][kColType], "MlaPrologV3");
    std::vector<std::string> seq;
    for (size_t i = a; i <= b; ++i) {
      const auto t = taxon(rows[i]);
      for (const char* c : {"attention.mla", "attention.lightning_indexer", "attention.flash_score",
                            "attention.sparse_attn.v_up_proj", "sampling.argmax"})
        if (t.has_category(c)) seq.push_back(c);
      if (t.has_category("attention.mla")) {
        EXPECT_EQ(i, static_cast<size_t>(anchor[l]));
      }
    }
    std::vector<std::string> want = {"attention.mla", "attention.lightning_indexer", "attention.flash_score",
                                     "attention.sparse_attn.v_up_proj"};
    if (l >= 77) want.push_back("sampling.argmax");  // the last main layer and each MTP layer end with ArgMax
    EXPECT_EQ(seq, want);
    EXPECT_EQ(taxon(rows[b]).has_role("selection"), l >= 77) << "selection rows end the body and every MTP layer";
  }
}

TEST(SynthGlm5, LayersOverrideKeepsTheDensePrefix) {
  testing::ScratchDir a("synth_glm5_l10"), b("synth_glm5_l6");
  for (const auto& [dir, layers, dense] : {std::tuple<const fs::path*, int, int>{&a.path(), 10, 3}, {&b.path(), 6, 1}}) {
    SCOPED_TRACE("layers " + std::to_string(layers));
    const Gen g = gen(opts("glm5_mtp", *dir, 2, 1, layers));
    const Json& s = g.gt.at("steps").items[0];
    EXPECT_EQ(s.at("main_layers").num, layers);
    EXPECT_EQ(s.at("speculative_layers").num, 3);
    int n_dense = 0;
    for (const Json& l : s.at("layers").items) n_dense += l.at("kind").text == "dense";
    EXPECT_EQ(n_dense, dense);
    EXPECT_EQ(type_counts(rows_of(g, 1), 1)["MlaPrologV3"], layers + 3);
    check_blocks_against_rows(g);
  }
}

TEST(SynthGlm5, DummyRankBlocksAreMoeOrFfn) {
  testing::ScratchDir dir("synth_glm5_dummy");
  SynthOptions o = opts("glm5_mtp", dir.path(), 2, 2, 8);
  o.dummy_ranks = {1};
  const Gen g = gen(o);
  const Json& r0 = g.gt.at("ranks").items[0].at("steps").items[0];
  const Json& r1 = g.gt.at("ranks").items[1].at("steps").items[0];
  EXPECT_EQ(r0.find("layer_blocks"), nullptr) << "written only where the rank differs";
  ASSERT_NE(r1.find("layer_blocks"), nullptr);
  const Json& lb = r1.at("layer_blocks");
  ASSERT_EQ(lb.items.size(), 11u);
  for (size_t l = 0; l < 11; ++l) EXPECT_EQ(strings(lb.items[l]), l < 3 ? Blocks{"ffn"} : Blocks{"moe"}) << l;
  EXPECT_EQ(type_counts(rows_of(g, 1), 1)["MlaPrologV3"], 0);
  check_blocks_against_rows(g);
}

// ---- blocks of the existing scenarios ----

TEST(SynthBlocks, MatchTheRowsOfEveryScenario) {
  for (const char* scenario : {"dense_gqa", "moe_mla_decode", "training"}) {
    SCOPED_TRACE(scenario);
    testing::ScratchDir dir("synth_blocks");
    SynthOptions o = opts(scenario, dir.path(), 4, 2);
    o.dummy_ranks = {3};
    o.faults = {"exposed_aicpu:2"};
    const Gen g = gen(o);
    for (const Json& s : g.gt.at("steps").items)
      for (const Json& l : s.at("layers").items) {
        const Blocks b = strings(l.at("blocks"));
        if (l.at("kind").text == "moe" || l.at("kind").text == "mtp") EXPECT_EQ(b, Blocks({"attention", "moe"}));
        else EXPECT_EQ(b, Blocks({"attention", "ffn"})) << l.at("kind").text;
      }
    check_blocks_against_rows(g);
  }
}

TEST(SynthBlocks, PipelineStagesDecomposeTheirOwnLayers) {
  testing::ScratchDir dir("synth_blocks_pp");
  SynthOptions o = opts("training", dir.path(), 8, 2, 6);
  o.pp = 3;  // 8 ranks do not split into 3 stages
  EXPECT_EQ(generate_capture(o).status().code(), ErrorCode::kInvalidArgument);
  o = opts("training", dir.path(), 6, 2, 6);
  o.pp = 3;
  o.microbatches = 4;
  o.dummy_ranks = {5};
  const Gen g = gen(o);
  EXPECT_EQ(g.gt.at("steps").items[0].at("main_layers").num, 2 * 2 * 4) << "one stage: 2 layers x (fwd + bwd) x 4";
  EXPECT_EQ(g.gt.at("steps").items[0].at("layers").items.size(), 3u * 16);
  for (const Json& l : g.gt.at("steps").items[0].at("layers").items)
    EXPECT_EQ(strings(l.at("blocks")), Blocks({"attention", "ffn"}));
  const Json& r5 = g.gt.at("ranks").items[5];
  EXPECT_EQ(r5.at("pp_stage").num, 2);
  for (const Json& b : r5.at("steps").items[0].at("layer_blocks").items) EXPECT_EQ(strings(b), Blocks{"ffn"});
  check_blocks_against_rows(g);
}

// ---- split attention ----

TEST(SynthSplitAttention, TwoMlaAnchorsPerLayer) {
  testing::ScratchDir dir("synth_split"), dir2("synth_split_token");
  SynthOptions o = opts("moe_mla_decode", dir.path(), 2, 2);
  o.split_attention = true;
  const Gen g = gen(o);
  const Json& s = g.gt.at("steps").items[0];
  EXPECT_EQ(s.at("main_layers").num, 10);
  EXPECT_EQ(s.at("speculative_layers").num, 2);
  ASSERT_EQ(s.at("layers").items.size(), 12u);
  const Rows rows = rows_of(g, 0);
  for (int step = 1; step <= 2; ++step) {
    auto n = type_counts(rows, step);
    EXPECT_EQ(n["MlaPrologV2"], 12);
    EXPECT_EQ(n["MlaPreprocess"], 12);
    EXPECT_EQ(n["FusedInferAttentionScore"], 12);
  }
  const Json& st = g.gt.at("ranks").items[0].at("steps").items[0];
  const auto first = ints(st.at("layer_first_row"));
  const auto anchor = ints(st.at("layer_anchor_row"));
  const auto [sa, sb] = step_rows(rows, 1);
  for (size_t l = 0; l < 12; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const size_t a = static_cast<size_t>(first[l]);
    const size_t b = l + 1 < 12 ? static_cast<size_t>(first[l + 1]) - 1 : sb;
    EXPECT_EQ(rows[static_cast<size_t>(anchor[l])][kColType], "MlaPrologV2");
    // [head, MlaPrologV2, AddRmsNorm (block head), MlaPreprocess, FusedInferAttentionScore, TransposeBatchMatMul]
    std::vector<size_t> mla;
    for (size_t i = a; i <= b; ++i)
      if (taxon(rows[i]).has_category("attention.mla")) mla.push_back(i);
    ASSERT_EQ(mla.size(), 2u);
    EXPECT_EQ(rows[mla[0]][kColType], "MlaPrologV2");
    EXPECT_EQ(rows[mla[1]][kColType], "MlaPreprocess");
    EXPECT_NE(rows[mla[0]][kColName], rows[mla[1]][kColName]) << "different name keys";
    EXPECT_EQ(mla[1], mla[0] + 2);
    EXPECT_TRUE(taxon(rows[mla[0] + 1]).has_role("block_head")) << rows[mla[0] + 1][kColName];
    EXPECT_EQ(rows[mla[1] + 1][kColType], "FusedInferAttentionScore");
    EXPECT_EQ(rows[mla[1] + 2][kColType], "TransposeBatchMatMul");
  }
  check_blocks_against_rows(g);

  SynthOptions bad = opts("dense_gqa", dir2 / "bad", 2, 1);
  bad.split_attention = true;
  const Status st2 = generate_capture(bad).status();
  EXPECT_EQ(st2.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st2.message().find("split_attention applies to moe_mla_decode only"), std::string::npos) << st2.message();
}

// ---- interior_island ----

class SynthIsland : public ::testing::TestWithParam<const char*> {};

TEST_P(SynthIsland, ForeignFragmentBeforeTheEpilogue) {
  const std::string scenario = GetParam();
  const bool dense = scenario == "dense_gqa";
  testing::ScratchDir dir("synth_island");
  SynthOptions o = opts(scenario, dir.path(), 2, 3, scenario == "glm5_mtp" ? 8 : 0);
  o.faults = {"interior_island:1"};
  const Gen g = gen(o);
  const Json* f = fault(g, "interior_island");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(strings(f->at("expected_hard_errors")),
            Blocks({"interior_template_residual", "interior_unclassified_island"}));
  const Json& isl = f->at("injected_island");
  EXPECT_EQ(isl.at("rank").num, 1);
  EXPECT_EQ(isl.at("step").num, 2) << "the middle step";
  EXPECT_EQ(isl.at("step_index").num, 1);
  const auto a = static_cast<size_t>(isl.at("first_row").num), b = static_cast<size_t>(isl.at("last_row").num);
  const Blocks kernels = strings(isl.at("kernels"));
  ASSERT_EQ(b - a + 1, kernels.size());
  ASSERT_EQ(kernels.size(), 4u);

  const Rows rows = rows_of(g, 1);
  for (size_t i = a; i <= b; ++i) {
    EXPECT_EQ(rows[i][kColName], kernels[i - a]);
    EXPECT_EQ(rows[i][kColStep], "2");
  }
  const auto head = taxon(rows[a]);
  EXPECT_TRUE(head.has_role("block_head")) << rows[a][kColName];
  const auto anchor = taxon(rows[a + 1]);
  EXPECT_TRUE(anchor.has_role("attention"));
  EXPECT_TRUE(anchor.has_category(dense ? "attention.flash_score" : "attention.mla"));
  // the foreign roles occur nowhere else on the rank
  std::set<std::string> foreign;
  for (size_t i = a + 2; i <= b; ++i)
    for (const auto& role : taxon(rows[i]).roles) foreign.insert(role);
  EXPECT_EQ(foreign, dense ? std::set<std::string>({"aicpu", "moe"}) : std::set<std::string>({"aicpu", "sampling"}));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i >= a && i <= b) continue;
    for (const auto& role : taxon(rows[i]).roles) EXPECT_EQ(foreign.count(role), 0u) << i << " " << rows[i][kColName];
  }
  // the epilogue follows: final norm, lm head, ArgMax
  EXPECT_EQ(rows[b + 1][kColType], "AddRmsNorm");
  EXPECT_TRUE(taxon(rows[b + 2]).has_role("compute"));
  EXPECT_EQ(rows[b + 3][kColType], "ArgMaxV2");

  // ground-truth layers are unchanged; the island sits between the last main layer's start and the next layer
  const Json& st = g.gt.at("ranks").items[1].at("steps").items[1];
  EXPECT_EQ(ints(st.at("injected_island_rows")), (std::vector<int64_t>{static_cast<int64_t>(a), static_cast<int64_t>(b)}));
  EXPECT_EQ(g.gt.at("ranks").items[0].at("steps").items[1].find("injected_island_rows"), nullptr);
  const Json& step = g.gt.at("steps").items[1];
  EXPECT_EQ(step.at("layers").items.size(), g.gt.at("steps").items[2].at("layers").items.size());
  const auto first = ints(st.at("layer_first_row"));
  const auto main = static_cast<size_t>(step.at("main_layers").num);
  EXPECT_LT(first[main - 1], static_cast<int64_t>(a));
  if (first.size() > main) {
    EXPECT_GT(first[main], static_cast<int64_t>(b));
  }
  // exactly 4 more rows than the same program's later step; the other rank unchanged
  const auto& s1 = g.gt.at("ranks").items[1].at("steps").items;
  const auto& s0 = g.gt.at("ranks").items[0].at("steps").items;
  EXPECT_EQ(s1[1].at("kernel_rows").num, s1[2].at("kernel_rows").num + 4);
  EXPECT_EQ(s0[1].at("kernel_rows").num, s0[2].at("kernel_rows").num);
  check_blocks_against_rows(g);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, SynthIsland, ::testing::Values("dense_gqa", "moe_mla_decode", "glm5_mtp"));

TEST(SynthIslandErrors, TrainingIsRejectedAndDummyRanksGetTheirAnchorKind) {
  testing::ScratchDir dir("synth_island_err");
  SynthOptions o = opts("training", dir / "t", 2, 3);
  o.faults = {"interior_island:1"};
  const Status st = generate_capture(o).status();
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("interior_island applies to dense_gqa, moe_mla_decode and glm5_mtp"), std::string::npos);

  o = opts("moe_mla_decode", dir / "m", 2, 3);
  o.dummy_ranks = {1};
  o.faults = {"interior_island:1"};
  const Gen g = gen(o);
  const Json& isl = fault(g, "interior_island")->at("injected_island");
  const Rows rows = rows_of(g, 1);
  const auto a = static_cast<size_t>(isl.at("first_row").num);
  EXPECT_EQ(rows[a + 1][kColType], "MoeGatingTopK") << "a dummy rank anchors on MoE";
  for (const auto& r : rows) EXPECT_NE(r[kColType], "MlaPreprocess");
  check_blocks_against_rows(g);
}

// ---- determinism ----

TEST(SynthStructure, SameSeedSameBytes) {
  testing::ScratchDir a("synth_det5a"), b("synth_det5b");
  SynthOptions o = opts("glm5_mtp", a.path(), 3, 3, 9);
  o.faults = {"interior_island:2", "exposed_aicpu:1"};
  o.dummy_ranks = {0};
  const Gen ga = gen(o);
  o.out_dir = b.path();
  o.threads = 2;
  const Gen gb = gen(o);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(a.path())) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), a.path());
    EXPECT_EQ(testutil::slurp(e.path()), testutil::slurp(b.path() / rel)) << rel;
    ++files;
  }
  EXPECT_EQ(files, 3 * 8 + 1);
  check_blocks_against_rows(ga);
}

}  // namespace
}  // namespace ascprof::synth
