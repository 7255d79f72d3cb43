#include "mini_db.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>

namespace ascprof::testing {

void sql_exec(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg << "\n" << sql.substr(0, 400);
}

namespace {

std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

class Strings {
 public:
  int64_t id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<int64_t>(ids_.size()));
    return it->second;
  }
  std::string inserts() const {
    std::string sql;
    for (const auto& [s, i] : ids_) sql += "INSERT INTO STRING_IDS VALUES(" + std::to_string(i) + "," + q(s) + ");\n";
    return sql;
  }

 private:
  std::map<std::string, int64_t> ids_;
};

}  // namespace

void write_mini_db(const std::filesystem::path& path, int rank, const std::vector<MiniKernel>& kernels,
                   const std::vector<MiniComm>& comms, const std::vector<std::array<int64_t, 3>>& steps,
                   const std::string& version, const std::string& group_json) {
  std::filesystem::create_directories(path.parent_path());
  std::filesystem::remove(path);
  const bool block_num = version.rfind("1.0", 0) != 0;
  Strings s;
  std::string sql = "PRAGMA page_size=4096; BEGIN;\n";
  sql += "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT);\n";
  sql += "CREATE TABLE META_DATA (name TEXT,value TEXT);\n";
  sql += "INSERT INTO META_DATA VALUES('SCHEMA_VERSION'," + q(version) + ");\n";
  if (!group_json.empty()) sql += "INSERT INTO META_DATA VALUES('parallel_group_info'," + q(group_json) + ");\n";
  sql += "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);\n";
  sql += "INSERT INTO RANK_DEVICE_MAP VALUES(" + std::to_string(rank) + ",0);\n";
  sql += "CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);\n";
  for (const auto& st : steps)
    sql += "INSERT INTO STEP_TIME VALUES(" + std::to_string(st[0]) + "," + std::to_string(st[1]) + "," +
           std::to_string(st[2]) + ");\n";
  sql += "CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,globalTaskId INTEGER,"
         "globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER);\n";
  sql += std::string("CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,") +
         (block_num ? "blockNum INTEGER,mixBlockNum INTEGER," : "blockDim INTEGER,mixBlockDim INTEGER,") +
         "taskType INTEGER,opType INTEGER,inputFormats INTEGER,inputDataTypes INTEGER,inputShapes INTEGER,"
         "outputFormats INTEGER,outputDataTypes INTEGER,outputShapes INTEGER,attrInfo INTEGER" +
         (block_num ? ",opState INTEGER,hf32Eligible INTEGER" : "") + ");\n";
  sql += "CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC);\n";
  sql += "CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,connectionId INTEGER,"
         "groupName INTEGER,opId INTEGER PRIMARY KEY,relay INTEGER,retry INTEGER,dataType INTEGER,algType INTEGER,"
         "count NUMERIC,opType INTEGER);\n";
  int64_t gid = 0;
  for (const MiniKernel& k : kernels) {
    ++gid;
    const std::string ks = k.core == "AI_CORE" ? "KERNEL_AICORE" : "KERNEL_AIVEC";
    sql += "INSERT INTO TASK VALUES(" + std::to_string(k.start_ns) + "," + std::to_string(k.start_ns + k.dur_ns) +
           ",0," + std::to_string(1000 + gid) + "," + std::to_string(gid) + ",77," + std::to_string(s.id(ks)) +
           ",4294967295," + std::to_string(k.stream) + "," + std::to_string(gid) + ",4294967295);\n";
    const std::string na = std::to_string(s.id("N/A")), fmt = std::to_string(s.id("ND")),
                      dt = std::to_string(s.id("FLOAT16"));
    sql += "INSERT INTO COMPUTE_TASK_INFO VALUES(" + std::to_string(s.id(k.name)) + "," + std::to_string(gid) + "," +
           std::to_string(k.block) + ",0," + std::to_string(s.id(k.core)) + "," + std::to_string(s.id(k.op_type)) + "," +
           fmt + "," + dt + "," + std::to_string(s.id(k.input_shapes)) + "," + fmt + "," + dt + "," +
           std::to_string(s.id(k.input_shapes)) + "," + na +
           (block_num ? "," + std::to_string(s.id("dynamic")) + "," + std::to_string(s.id("NO")) : std::string()) +
           ");\n";
    if (k.mac_time_ns >= 0)
      sql += "INSERT INTO TASK_PMU_INFO VALUES(" + std::to_string(gid) + "," + std::to_string(s.id("aic_mac_time")) +
             "," + std::to_string(k.mac_time_ns) + ");\n";
  }
  int64_t op = 0;
  for (const MiniComm& c : comms) {
    ++op;
    sql += "INSERT INTO COMMUNICATION_OP VALUES(" + std::to_string(s.id(c.name)) + "," + std::to_string(c.start_ns) +
           "," + std::to_string(c.start_ns + c.dur_ns) + "," + std::to_string(5000 + op) + "," +
           std::to_string(s.id(c.group)) + "," + std::to_string(op) + ",0,0,4," + std::to_string(s.id("RING")) +
           ",1024," + std::to_string(s.id(c.op_type)) + ");\n";
  }
  sql += s.inserts();
  sql += "COMMIT;\n";
  sql_exec(path, sql);
}

std::vector<MiniKernel> mini_kernels(size_t count, int64_t t0) {
  std::vector<MiniKernel> out;
  for (size_t i = 0; i < count; ++i) {
    MiniKernel k;
    k.name = i % 2 ? "MatMul_1" : "Add_2";
    k.op_type = i % 2 ? "MatMul" : "Add";
    k.core = i % 2 ? "AI_CORE" : "AI_VECTOR_CORE";
    k.start_ns = t0 + static_cast<int64_t>(i) * 2000;
    k.dur_ns = 1000;
    k.block = 8;
    k.mac_time_ns = i % 2 ? 500 : -1;
    out.push_back(k);
  }
  return out;
}

void damage_bytes(const std::filesystem::path& path, uint64_t offset, size_t bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekp(static_cast<std::streamoff>(offset));
  const std::string junk(bytes, '\x55');
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  ASSERT_TRUE(f.good());
}

}  // namespace ascprof::testing
