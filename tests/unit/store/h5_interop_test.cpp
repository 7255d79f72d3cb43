// Files must be readable without our code: h5dump always (hdf5-tools), h5py when installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ascprof/store/h5_writer.hpp"
#include "ascprof/store/stats_table.hpp"
#include "support/test_support.hpp"

namespace ascprof::store {
namespace {

namespace fs = std::filesystem;
using ascprof::testing::ScratchDir;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_sample(const fs::path& file) {
  StringPool pool;
  const std::vector<StrId> names{pool.intern("MatMul"), pool.intern("矩阵乘法"), pool.intern("a \"b\"")};
  auto w = H5Writer::create(file);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASCPROF_ASSERT_OK(w->write_string_table("/strings", pool));
  TableWriter t(*w, "/kernels", 3);
  ASCPROF_ASSERT_OK(t.column("start_ns", std::vector<int64_t>{1736408883704643212, 1736408883704644000, 1736408883704645000}).status());
  ASCPROF_ASSERT_OK(t.column("dur_us", std::vector<double>{1.5, 2.25, 0.0}).status());
  ASCPROF_ASSERT_OK(t.id_column("name", names).status());
  ASCPROF_ASSERT_OK(t.string_column("op_type", std::vector<std::string>{"MatMul", "转置", ""}).status());
  ASCPROF_ASSERT_OK(t.finish());
  // a table large enough to be chunked and filtered: three chunks, the last one partial (the
  // writer filters such chunks itself and writes them pre-filtered; another reader must inflate them)
  std::vector<int64_t> ts(300'000);
  for (size_t i = 0; i < ts.size(); ++i) ts[i] = 1736408883704643212 + static_cast<int64_t>(i * 1000 + i % 7);
  ASCPROF_ASSERT_OK(TableWriter(*w, "/trace/host_ops", ts.size()).column("start_ns", ts).finish());
  Stats stats;
  stats.note(Stat::csv_blank_line, "kernel_details.csv:3: blank");
  ASCPROF_ASSERT_OK(write_stats(*w, stats));
  ASCPROF_ASSERT_OK(w->commit("normalize"));
}

TEST(H5Interop, H5dumpReadsHeadersAndData) {
  if (!fs::exists("/usr/bin/h5dump")) GTEST_SKIP() << "/usr/bin/h5dump not installed (apt install hdf5-tools)";
  ScratchDir dir("store");
  const fs::path file = dir / "sample.h5";
  write_sample(file);
  const fs::path out = dir / "dump.txt";
  const std::string cmd = "/usr/bin/h5dump -H -p '" + file.string() + "' > '" + out.string() + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(out);
  const std::string header = slurp(out);
  EXPECT_NE(header.find("DATASET \"kernels\""), std::string::npos) << header;
  EXPECT_NE(header.find("H5T_COMPOUND"), std::string::npos) << header;
  EXPECT_NE(header.find("\"start_ns\""), std::string::npos) << header;
  EXPECT_NE(header.find("H5T_STD_I64LE"), std::string::npos);
  EXPECT_NE(header.find("H5T_IEEE_F64LE"), std::string::npos);
  EXPECT_NE(header.find("CSET H5T_CSET_UTF8"), std::string::npos);
  EXPECT_NE(header.find("DEFLATE"), std::string::npos);
  EXPECT_NE(header.find("SHUFFLE"), std::string::npos);
  EXPECT_NE(header.find("ATTRIBUTE \"complete\""), std::string::npos);
  EXPECT_NE(header.find("ATTRIBUTE \"row_count\""), std::string::npos);

  const std::string cmd2 = "/usr/bin/h5dump -d /kernels -d /strings '" + file.string() + "' > '" +
                           out.string() + "' 2>&1";
  ASSERT_EQ(std::system(cmd2.c_str()), 0) << slurp(out);
  const std::string data = slurp(out);
  EXPECT_NE(data.find("1736408883704643212"), std::string::npos) << data;
  EXPECT_NE(data.find("\"MatMul\""), std::string::npos) << data;

  // the last row of the pre-filtered, partial edge chunk
  const std::string cmd3 = "/usr/bin/h5dump -d /trace/host_ops -s 299999 -c 1 '" + file.string() + "' > '" +
                           out.string() + "' 2>&1";
  ASSERT_EQ(std::system(cmd3.c_str()), 0) << slurp(out);
  EXPECT_NE(slurp(out).find("1736408884004642212"), std::string::npos) << slurp(out);
}

TEST(H5Interop, H5pyReadsTablesWhenInstalled) {
  if (std::system("/usr/bin/python3 -c 'import h5py' > /dev/null 2>&1") != 0) GTEST_SKIP() << "h5py not installed";
  ScratchDir dir("store");
  const fs::path file = dir / "sample.h5";
  write_sample(file);
  const fs::path script = dir / "check.py";
  ascprof::testing::write_text(script,
                               "import sys, h5py\n"
                               "f = h5py.File(sys.argv[1], 'r')\n"
                               "strings = f['/strings'].asstr()[:]\n"
                               "k = f['/kernels'][:]\n"
                               "names = list(strings[k['name']])\n"
                               "assert names == ['MatMul', '矩阵乘法', 'a \"b\"'], names\n"
                               "ops = [b.decode() for b in k['op_type']]\n"
                               "assert ops == ['MatMul', '转置', ''], ops\n"
                               "assert list(f['/kernels'].attrs['columns']) == ['start_ns', 'dur_us', 'name', 'op_type']\n"
                               "assert list(f['/kernels'].attrs['id_columns']) == ['name']\n"
                               "assert list(f['/kernels'].attrs['id_tables']) == ['/strings']\n"
                               "assert int(k['start_ns'][0]) == 1736408883704643212\n"
                               "import numpy as np\n"
                               "i = np.arange(300000, dtype=np.int64)\n"
                               "h = f['/trace/host_ops']\n"
                               "assert h.chunks[0] < 300000 and h.compression == 'gzip' and h.shuffle, (h.chunks, h.compression)\n"
                               "assert (h['start_ns'] == 1736408883704643212 + i * 1000 + i % 7).all()\n"
                               "assert int(f.attrs['complete']) == 1 and f.attrs['stage'] == 'normalize'\n"
                               "try:\n"
                               "    import pandas as pd\n"
                               "except ImportError:\n"
                               "    sys.exit(0)\n"
                               "df = pd.DataFrame(f['/kernels'][:])\n"
                               "assert list(df.columns) == ['start_ns', 'dur_us', 'name', 'op_type'] and len(df) == 3\n");
  const std::string cmd = "/usr/bin/python3 '" + script.string() + "' '" + file.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

}  // namespace
}  // namespace ascprof::store
