// libFuzzer target: the knowledge/ rule-file parser (parse_rule_text) and every loader of Knowledge.
//
// The whole input is one rule file. It is parsed, then handed to each rule-file loader (vocabulary,
// taxonomy, op_type, hccl_op_kind, pipeline, name_key, segmentation, summarize, diagnostics,
// operator_alignment, operator_deep_dive, moe_trace, modules), the ones that need a vocabulary getting the project's real one (loaded once
// from knowledge/vocabulary.rules). Whatever loads is then used on a few kernel names, so the
// matchers built from fuzzed rules run too. Seeds are the real .rules files, so each loader is
// reached with mostly-valid text of its own kind.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ascprof/knowledge/knowledge.hpp"
#include "ascprof/knowledge/rule_file.hpp"
#include "fuzz_check.hpp"

#ifndef ASCPROF_FUZZ_KNOWLEDGE_DIR
#define ASCPROF_FUZZ_KNOWLEDGE_DIR "knowledge"
#endif

namespace {

using namespace ascprof::knowledge;

const Vocabulary* g_vocab = nullptr;

constexpr std::string_view kNames[][3] = {
    {"FlashAttentionScore", "FlashAttentionScore", "AI_CORE"},
    {"aclnnMatmul_MatMulV3_MatMulV3", "MatMulV3", "MIX_AIC"},
    {"hcom_allReduce__586_0_1", "hcom_allReduce_", "COMMUNICATION"},
    {"MoeDistributeDispatch_0123456789abcdef0123", "MoeDistributeDispatch", "MIX_AIV"},
    {"", "", ""},
};

void exercise(const RuleFile& file) {
  const Vocabulary& vocab = *g_vocab;
  {
    Vocabulary v;
    if (v.load(file).ok()) {
      (void)v.categories_under("attention");
      (void)v.category_index("attention.mla");
    }
  }
  {
    Taxonomy t;
    if (t.load(file, vocab).ok())
      for (const auto& n : kNames) (void)t.classify(n[0], n[1], n[2]);
  }
  {
    OpTypeRules o;
    if (o.load_op_type(file, vocab).ok()) {
      for (const auto& n : kNames) {
        bool exact = false;
        const int ot = o.op_type(n[2], &exact);
        FUZZ_CHECK(ot >= -1 && ot < static_cast<int>(vocab.op_types().size()), "op_type index out of range");
        (void)o.fuse(ot, exact, true);
      }
    }
    OpTypeRules h;
    if (h.load_hccl_kind(file, vocab).ok())
      for (const auto& n : kNames) (void)h.hccl_kind(n[1]);
  }
  {
    PipelineRules p;
    if (p.load(file).ok()) {
      (void)p.field_for_header("aic_mac_time(us)");
      (void)p.field_for_header("AIV_VEC_TIME(US)");
    }
  }
  {
    NameKeyRules k;
    if (k.load(file, vocab).ok()) {
      for (const auto& n : kNames) (void)k.name_key(n[0]);
      (void)k.shape_signature("1,2,3;4,5");
      (void)k.shape_signature("");
    }
  }
  {
    SegmentationRules s;
    (void)s.load(file, vocab);
  }
  {
    SummarizeRules s;
    (void)s.load(file);
  }
  {
    DiagnosticsRules d;
    (void)d.load(file, vocab);
  }
  {
    OperatorAlignmentRules a;
    if (a.load(file, vocab).ok()) {
      CategorySet cats;
      cats.set(0);
      const int r = a.role_of(cats);
      FUZZ_CHECK(r >= -1 && r < static_cast<int>(a.roles.size()), "role index out of range");
    }
  }
  {
    DeepDiveRules d;
    if (d.load(file, vocab).ok()) {
      FUZZ_CHECK(d.chip(d.default_chip) != nullptr, "default chip without a [chip] block");
      FUZZ_CHECK(d.min_operators <= d.max_operators, "min_operators above max_operators");
      for (const auto& r : d.rules)
        for (const auto* conds : {&r.when, &r.test, &r.high_when})
          for (const auto& c : *conds) {
            const size_t n = c.kind == DeepDiveCondition::Kind::kNumber ? kDeepDiveNumbers.size()
                             : c.kind == DeepDiveCondition::Kind::kWord  ? kDeepDiveWords.size()
                                                                         : kDeepDiveLists.size();
            FUZZ_CHECK(c.feature >= 0 && static_cast<size_t>(c.feature) < n, "condition feature out of range");
          }
      (void)d.bytes_of("DT_BF16");
    }
  }
  {
    MoeTraceRules t;
    if (t.load(file).ok()) {
      FUZZ_CHECK(t.min_span_share <= t.max_span_share, "attachment shares out of order");
      (void)t.role_of("dispatch-gmm1 wait-moe-token");
      (void)t.is_instrumented_kernel("aclnnFusedDeepMoe_FusedDeepMoe", "FusedDeepMoe");
    }
  }
  {
    ModuleRules m;
    if (m.load(file).ok()) {
      FUZZ_CHECK(m.spread_ratio >= 1, "spread_ratio below 1");
      FUZZ_CHECK(!m.prefix.empty(), "empty module prefix");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* dir = std::getenv("ASCPROF_KNOWLEDGE_DIR");
  const std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : ASCPROF_FUZZ_KNOWLEDGE_DIR);
  auto file = load_rule_file(path + "/vocabulary.rules");
  static Vocabulary vocab;
  if (!file.ok() || !vocab.load(*file).ok()) {
    std::fprintf(stderr, "knowledge_fuzzer: cannot load %s/vocabulary.rules (set ASCPROF_KNOWLEDGE_DIR)\n",
                 path.c_str());
    std::abort();
  }
  g_vocab = &vocab;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_rule_text(text, "fuzz.rules");
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == ascprof::ErrorCode::kKnowledge, "parse error not kKnowledge");
    return 0;
  }
  for (const auto& b : parsed->blocks) {
    FUZZ_CHECK(!b.kind.empty(), "block with empty kind");
    for (const auto& e : b.entries) FUZZ_CHECK(!e.key.empty(), "entry with empty key");
  }
  exercise(*parsed);
  return 0;
}
