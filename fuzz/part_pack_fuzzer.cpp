// libFuzzer target: the part pack reader (store/part_pack.hpp), the file a rank leaves with its rows
// of the root tables and that a resumed run trusts after a crash, a full disk or a copy.
//
// The input is the whole file. Besides sanitizer findings it checks that an opened pack reads each
// section the same three ways (whole, streamed in small pieces, line by line) and that its
// kernel-side copy writes exactly those bytes; a section whose deflated segment does not inflate
// (the index is checked at open, the bytes only when read) fails each way with a message.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ascprof/store/part_pack.hpp"
#include "fuzz_check.hpp"

namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("ascprof-packfuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto pack_path = scratch() / "rank.parts";
  const auto copy_path = scratch() / "copy";
  if (std::FILE* f = std::fopen(pack_path.c_str(), "wb")) {
    if (size > 0) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  auto pack = ascprof::store::PartPackReader::open(pack_path);
  if (!pack.ok()) {
    FUZZ_CHECK(!pack.status().message().empty(), "an error without a message");
    return 0;
  }
  for (const std::string& name : pack->sections()) {
    auto whole = pack->read(name);
    if (!whole.ok()) {
      FUZZ_CHECK(whole.status().code() == ascprof::ErrorCode::kParse && !whole.status().message().empty(),
                 "a section of an opened pack fails other than as damaged");
      FUZZ_CHECK(!pack->stream(name, 7, [](std::string_view) { return true; }).ok(), "stream reads a damaged section");
      continue;
    }
    FUZZ_CHECK(whole->size() == pack->size(name), "section size differs from its index");
    std::string streamed;
    FUZZ_CHECK(pack->stream(name, 7, [&](std::string_view piece) {
                      streamed += piece;
                      return true;
                    }).ok(),
               "stream failed");
    FUZZ_CHECK(streamed == *whole, "streamed bytes differ");
    ascprof::store::PartLineCursor cursor(*pack, name);
    std::string line, lines;
    while (cursor.next(line)) lines += line + "\n";
    FUZZ_CHECK(cursor.status().ok(), "line cursor failed");
    const bool ends_in_newline = whole->empty() || whole->back() == '\n';
    FUZZ_CHECK(lines == (ends_in_newline ? *whole : *whole + "\n"), "lines differ");
    const int fd = ::open(copy_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FUZZ_CHECK(fd >= 0, "scratch file");
    FUZZ_CHECK(pack->copy_to(name, fd, copy_path).ok(), "copy failed");
    ::close(fd);
    std::string copied;
    if (std::FILE* f = std::fopen(copy_path.c_str(), "rb")) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) copied.append(buf, n);
      std::fclose(f);
    }
    FUZZ_CHECK(copied == *whole, "copied bytes differ");
  }
  return 0;
}
