#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/), makes a seed corpus for each and runs each for a while.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [BUILD_DIR]
#
#   SECONDS_PER_TARGET  default 60
#   BUILD_DIR           default build-fuzz (relative to the repository root, or absolute)
#   env JOBS            build parallelism (default 2)
#   env FUZZ_TARGETS    targets to run (default: all six, space separated)
#   env ASCPROF_REAL_FIXTURES  real captures for seeds (default ../shared/fixtures/real; skipped if absent)
#
# Seeds land in BUILD_DIR/corpus/<target>/ (libFuzzer adds what it finds there too), logs in
# BUILD_DIR/logs/<target>.log, crash/leak/timeout/oom inputs in BUILD_DIR/artifacts/<target>/.
# Exits 1 if any target found something (or failed to run), 0 otherwise. See fuzz/README.md.
set -euo pipefail
# Everything runs inside main(), so editing this file while a long run is going cannot derail it.
main() {
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_PER_TARGET="${1:-60}"
BUILD_DIR="${2:-build-fuzz}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
JOBS="${JOBS:-2}"
TARGETS="${FUZZ_TARGETS:-csv_fuzzer trace_view_fuzzer communication_fuzzer knowledge_fuzzer profiler_db_fuzzer part_pack_fuzzer}"
FIXTURES="${ASCPROF_REAL_FIXTURES:-$ROOT/../shared/fixtures/real}"

# ---- build -------------------------------------------------------------------------------------
# clang and its libFuzzer runtime (Debian 12: packages clang and libclang-rt-14-dev).
probe="$(mktemp -d /tmp/ascprof-fuzz-probe.XXXXXX)"
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
if ! "${CXX_FUZZ:-clang++}" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "fuzz.sh: ${CXX_FUZZ:-clang++} cannot link a libFuzzer target; install clang and libclang-rt-14-dev" >&2
  head -3 "$probe/err" >&2
  exit 2
fi
CC="${CC_FUZZ:-clang}" CXX="${CXX_FUZZ:-clang++}" cmake -S "$ROOT" -B "$BUILD_DIR" \
  -DASCPROF_FUZZ=ON -DASCPROF_BUILD_TESTS=OFF -DASCPROF_BUILD_BENCHMARKS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# shellcheck disable=SC2086
cmake --build "$BUILD_DIR" --target $TARGETS -j "$JOBS"

# ---- seed corpus -------------------------------------------------------------------------------
CORPUS="$BUILD_DIR/corpus"
mkdir -p "$CORPUS" "$BUILD_DIR/artifacts" "$BUILD_DIR/logs" "$BUILD_DIR/dicts"

# seed TARGET NAME PREFIX_BYTE_OCTAL MAX_BYTES < data : writes one seed (optional mode byte first).
seed() {
  local target="$1" name="$2" prefix="$3" max="$4"
  mkdir -p "$CORPUS/$target"
  { if [[ -n "$prefix" ]]; then printf '%b' "\\$prefix"; fi; head -c "$max"; } >"$CORPUS/$target/seed-$name"
}

# Real fixtures (read in place, never copied into the repository).
if [[ -d "$FIXTURES" ]]; then
  i=0
  while IFS= read -r f; do
    i=$((i + 1))
    seed csv_fuzzer "kd$i" 000 16000 <"$f"         # comma, fixed width, kernel_details import
    seed csv_fuzzer "kd$i-limits" 010 16000 <"$f"  # small field/row bounds (kLimit path)
  done < <(find "$FIXTURES" \( -name 'kernel_details*.csv' -o -name 'step_trace_time.csv' \
                               -o -name 'op_summary*.csv' -o -name '*op_summary_hybrid*.csv' \) | sort)
  i=0
  while IFS= read -r f; do
    i=$((i + 1))
    seed trace_view_fuzzer "tv$i" 000 60000 <"$f"     # batched
    seed trace_view_fuzzer "tv$i-ev" 001 60000 <"$f"  # per event
  done < <(find "$FIXTURES" -name '*trace_view*.json' | sort)
  i=0
  while IFS= read -r f; do
    i=$((i + 1))
    seed communication_fuzzer "comm$i" "" 60000 <"$f"
  done < <(find "$FIXTURES" -name 'communication.json' | sort)
  # databases: as files (mode 0) and, where the sqlite3 shell is installed, as SQL dumps (mode 1)
  i=0
  while IFS= read -r f; do
    i=$((i + 1))
    seed profiler_db_fuzzer "db$i" 000 2000000 <"$f"
    if command -v sqlite3 >/dev/null; then
      # (the seed keeps the first 200 KB: the dump is cut short on purpose, || true for its SIGPIPE)
      { sqlite3 "file:$f?immutable=1" .dump | grep -v -E '^INSERT INTO (PYTORCH_CALLCHAINS|NPU_MODULE_MEM|MEMORY_RECORD|ACC_PMU)' \
          || true; } | seed profiler_db_fuzzer "sql$i" 001 200000
    fi
  done < <(find "$FIXTURES" -name '*.db' | sort)
else
  echo "fuzz.sh: no real fixtures at $FIXTURES; using the handwritten seeds only" >&2
fi
for f in "$ROOT"/knowledge/*.rules; do
  # shellcheck disable=SC2094  # reads the rules file, writes the corpus copy
  seed knowledge_fuzzer "$(basename "$f" .rules)" "" 60000 <"$f"
done

# Handwritten seeds for shapes the fixtures lack (BOM, CRLF, quoting, torch_npu concatenation defects).
printf '\357\273\277Name,Type,"Start Time(us)",Duration(us),Input Shapes\r\n"a,b",MatMul,"1700000000000001.5\t",3.25,"""1,2;3"""\r\nx""y,"q""q",2,,\r\n\r\n"open' \
  | seed csv_fuzzer hand-bom-crlf 000 16000
printf 'Step Id\tComputing\tCommunication(Not Overlapped)\n1\t12.5\t3\n2\t"x\ny"\t\n' | seed csv_fuzzer hand-tab 001 16000
printf 'Name,Duration(us)\n"a""",1\n"b"junk,2\n\0,3\n' | seed csv_fuzzer hand-junk 004 16000
cat <<'EOF' | seed trace_view_fuzzer hand-defects 000 60000
[{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"Python"}},
{"ph":"M","name":"process_name","pid":2,"args":{"name":"Ascend Hardware"}},
{"ph":"M","name":"thread_name","pid":2,"tid":7,"args":{"name":"Stream 7"}},
{"ph":"X","name":"ProfilerStep#3","pid":1,"tid":1,"ts":"1700000000000000.125","dur":5.5,"cat":"cpu_op"},
{"ph":"X","name":"MatMul","pid":2,"tid":7,"ts":1700000000000001.5,"dur":2,"args":{"Task Type":"AI_CORE","Task Id":3}}][{"ph":"s","id":"12","cat":"HostToDevice","name":"HostToDevice12","pid":1,"tid":1,"ts":1},
{"ph":"f","id":12,"bp":"e","cat":"HostToDevice","pid":2,"tid":7,"ts":2}}{"ph":"C","name":"HBM","pid":9,"ts":3,"args":{"v":1}}
garbage{"ph":"X","name":"hcom_allReduce__1_0_1","pid":3,"tid":4,"ts":4,"dur":1}
EOF
printf '{"traceEvents":[{"ph":"M","name":"process_name","pid":5,"args":{"name":"HCCL"}},{"ph":"M","name":"thread_name","pid":5,"tid":1,"args":{"name":"Plane 0"}},{"ph":"X","name":"Memcpy","pid":5,"tid":1,"ts":1,"dur":1,"args":{"transport type":"SDMA","size(Byte)":64,"bandwidth(GB/s)":1.5,"src rank":4294967295,"dst rank":1}}' \
  | seed trace_view_fuzzer hand-object-truncated 001 60000
cat <<'EOF' | seed communication_fuzzer hand-small "" 60000
{"step12":{"collective":{"hcom_allReduce__612_4_1@16937813838281358133":{"Communication Time Info":{"Start Timestamp(us)":1700000000000001.123,"Elapse Time(ms)":1.5,"Transit Time(ms)":"0.5","Wait Time(ms)":0,"Synchronization Time(ms)":0,"Idle Time(ms)":1,"Wait Time Ratio":0,"Synchronization Time Ratio":0},"Communication Bandwidth Info":{"RDMA":{"Transit Size(MB)":0,"Transit Time(ms)":0,"Bandwidth(GB/s)":0,"Large Packet Ratio":0,"Size Distribution":{}},"HCCS":{"Transit Size(MB)":1,"Transit Time(ms)":1,"Bandwidth(GB/s)":1,"Large Packet Ratio":1,"Size Distribution":{"1":[1,0.5]}}}},"Total Op Info":{"Communication Time Info":{"Elapse Time(ms)":1.5}}},"p2p":{}},"step":{"p2p":{"hcom_send__1_0@1":{}}}}
EOF

# a part pack: header, two sections (one of two segments), an empty one, the index, the footer
printf 'ascprof part pack 3\nx,1\ny,2\nhello\nz,3\na.csv\t20\t8\t2\traw\t8\nb\t28\t6\t1\traw\t6\nempty\t38\t0\t0\traw\t0\na.csv\t34\t4\t1\traw\t4\nASCPACK1\046\0\0\0\0\0\0\0\110\0\0\0\0\0\0\0' \
  | seed part_pack_fuzzer hand-pack "" 4096
# and one whose section is a deflated segment (as the rank jobs write them)
python3 -c '
import struct, sys, zlib
rows = b"".join(b"evt_0_%d,rank0,MatMul,%d\n" % (i, i) for i in range(40))
z = zlib.compress(rows, 1)
head = b"ascprof part pack 3\n"
index = b"t.csv\t%d\t%d\t40\tzlib\t%d\n" % (len(head), len(z), len(rows))
at = len(head) + len(z)
sys.stdout.buffer.write(head + z + index + b"ASCPACK1" + struct.pack("<QQ", at, len(index)))' \
  | seed part_pack_fuzzer hand-pack-zlib "" 4096
cat <<'EOF' | seed profiler_db_fuzzer hand-sql "001" 60000
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT);
INSERT INTO STRING_IDS VALUES(0,'MatMul_1'),(1,'MatMul'),(2,'AI_CORE'),(3,'"8,16"'),(4,'aic_mac_time'),(5,'hcom_allReduce__1_0_1'),(6,'KERNEL_AICORE'),(7,'launch');
CREATE TABLE META_DATA (name TEXT,value TEXT);
INSERT INTO META_DATA VALUES('SCHEMA_VERSION','1.2.0'),('parallel_group_info','{"g":{"group_name":"dp","group_rank":0,"global_ranks":[0,1]}}');
CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);INSERT INTO RANK_DEVICE_MAP VALUES(0,0);
CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);INSERT INTO STEP_TIME VALUES(3,1000,90000);
CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,globalTaskId INTEGER,globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER);
INSERT INTO TASK VALUES(2000,3000,0,11,1,7,6,4294967295,2,1,4294967295),('4000',NULL,0,12,2,7,99,0,2,2,0),(5000,4000,0,13,3,7,6,0,2,3,0);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,blockNum INTEGER,mixBlockNum INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,outputDataTypes INTEGER,outputShapes INTEGER,attrInfo INTEGER,opState INTEGER,hf32Eligible INTEGER);
INSERT INTO COMPUTE_TASK_INFO VALUES(0,1,8,0,2,1,0,0,3,0,0,3,0,0,0),(77,2,'x',NULL,2,1,0,0,3,0,0,3,0,0,0),(0,3,8,0,2,1,0,0,3,0,0,3,0,0,0);
CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC);INSERT INTO TASK_PMU_INFO VALUES(1,4,500),(9,4,1),(1,99,2);
CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,connectionId INTEGER,groupName INTEGER,opId INTEGER PRIMARY KEY,relay INTEGER,retry INTEGER,dataType INTEGER,algType INTEGER,count NUMERIC,opType INTEGER);
INSERT INTO COMMUNICATION_OP VALUES(5,2500,8000,20,5,1,0,0,4,5,1024,5);
CREATE TABLE CANN_API (startNs INTEGER,endNs INTEGER,type INTEGER,globalTid INTEGER,connectionId INTEGER PRIMARY KEY,name INTEGER);INSERT INTO CANN_API VALUES(1500,1600,10000,30064771079,11,7);
CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC, step TEXT, type TEXT);
INSERT INTO CommAnalyzerTime VALUES('hcom_allReduce__1_0_1','123',2.5,0.0055,0.001,0.002,0,0.0025,'step3','collective'),('x','nan','?',1,1,1,1,1,'stepX','p2p');
CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC);
INSERT INTO StepTraceTime VALUES('3',1,2,3,4,5,6,7,8,9);
EOF

# Dictionaries: the keys and tokens the importers look for, so mutations reach the deep paths.
cat >"$BUILD_DIR/dicts/trace_view_fuzzer.dict" <<'EOF'
"\"ph\""
"\"name\""
"\"pid\""
"\"tid\""
"\"ts\""
"\"dur\""
"\"cat\""
"\"args\""
"\"id\""
"\"bp\""
"\"traceEvents\""
"\"process_name\""
"\"thread_name\""
"\"process_labels\""
"\"process_sort_index\""
"\"thread_sort_index\""
"\"Ascend Hardware\""
"\"Overlap Analysis\""
"\"Communication\""
"\"HCCL\""
"\"CANN\""
"\"Python\""
"\"Stream 1\""
"\"Plane 0\""
"\"Group 0 Communication\""
"\"ProfilerStep#1\""
"\"Task Type\""
"\"Task Id\""
"\"connection_id\""
"\"X\""
"\"M\""
"\"s\""
"\"f\""
"\"C\""
"}][{"
"}{"
"1700000000000000.125"
EOF
cat >"$BUILD_DIR/dicts/communication_fuzzer.dict" <<'EOF'
"\"step1\""
"\"collective\""
"\"p2p\""
"\"Total Op Info\""
"\"Communication Time Info\""
"\"Communication Bandwidth Info\""
"\"Start Timestamp(us)\""
"\"Elapse Time(ms)\""
"\"Transit Time(ms)\""
"\"Wait Time(ms)\""
"\"Synchronization Time(ms)\""
"\"Idle Time(ms)\""
"\"Wait Time Ratio\""
"\"Synchronization Time Ratio\""
"\"RDMA\""
"\"HCCS\""
"\"PCIE\""
"\"SDMA\""
"\"SIO\""
"\"Transit Size(MB)\""
"\"Bandwidth(GB/s)\""
"\"Large Packet Ratio\""
"\"Size Distribution\""
"@18446744073709551615"
"hcom_allReduce__"
"1e308"
EOF

# ---- run ---------------------------------------------------------------------------------------
max_len_of() {
  case "$1" in
    csv_fuzzer) echo 16384 ;;
    knowledge_fuzzer) echo 32768 ;;
    *) echo 65536 ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export ASCPROF_KNOWLEDGE_DIR="${ASCPROF_KNOWLEDGE_DIR:-$ROOT/knowledge}"

failed=0
summary=()
for t in $TARGETS; do
  bin="$BUILD_DIR/fuzz/$t"
  art="$BUILD_DIR/artifacts/$t"
  log="$BUILD_DIR/logs/$t.log"
  mkdir -p "$art" "$CORPUS/$t"
  args=(-max_total_time="$SECONDS_PER_TARGET" -max_len="$(max_len_of "$t")" -timeout=10 -rss_limit_mb=2048
        -print_final_stats=1 -artifact_prefix="$art/")
  [[ -f "$BUILD_DIR/dicts/$t.dict" ]] && args+=(-dict="$BUILD_DIR/dicts/$t.dict")
  echo "== $t: ${SECONDS_PER_TARGET}s, $(find "$CORPUS/$t" -type f | wc -l) corpus files, log $log"
  rc=0
  "$bin" "${args[@]}" "$CORPUS/$t" >"$log" 2>&1 || rc=$?
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)"
  cov="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)"
  found="$(find "$art" -type f | wc -l)"
  status=ok
  if [[ $rc -ne 0 || $found -ne 0 ]]; then
    status="FOUND (exit $rc, $found artifact(s) in $art)"
    failed=1
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz invariant failed)' "$log" | head -5 || true
  fi
  line="$(printf '%-22s executions %-10s exec/s %-7s peak_rss_mb %-5s %s  %s' \
          "$t" "${execs:-?}" "${rate:-?}" "${rss:-?}" "$cov" "$status")"
  echo "$line"
  summary+=("$line")
done

echo
echo "fuzz.sh summary (${SECONDS_PER_TARGET}s per target):"
printf '  %s\n' "${summary[@]}"
return "$failed"
}

main "$@"
exit $?
