#pragma once
/// The zlib-format compressor the store writes with (internal to src/store): libdeflate, whole
/// buffers at a time. Its output is an ordinary zlib stream, so everything that reads a pack
/// segment or an HDF5 deflate chunk (zlib's inflate, HDF5's own filter, Python's zlib, h5py)
/// reads it unchanged. benchmarks/codec_benchmark, 4 MiB segments of the packs' rows: level 1
/// compresses at 415-459 MB/s against zlib's 240-273 MB/s (ratio 0.157 / 0.122 against 0.162 /
/// 0.137 on r4's normalized_event_index.csv / generated raw_kernel_index rows), and whole-buffer
/// inflate runs at 1.8-2.1 GB/s against zlib's 0.65-0.77 GB/s.
#include <cstddef>
#include <memory>
#include <vector>

struct libdeflate_compressor;
struct libdeflate_decompressor;

namespace ascprof::store::detail {

class ZlibCompressor {
 public:
  explicit ZlibCompressor(int level);  ///< 1 (fastest) to 9; libdeflate also accepts up to 12
  ~ZlibCompressor();
  ZlibCompressor(ZlibCompressor&&) noexcept;
  ZlibCompressor& operator=(ZlibCompressor&&) noexcept;

  /// `n` bytes at `data` as one zlib stream into `out` (resized to fit). False only when the
  /// compressor could not be allocated.
  bool compress(const void* data, size_t n, std::vector<unsigned char>& out);
  /// The same into `out` of `capacity` bytes: the stream's length, or 0 when it does not fit.
  size_t compress_into(const void* data, size_t n, unsigned char* out, size_t capacity);
  /// The most bytes compress() can produce for `n` input bytes.
  size_t bound(size_t n);

 private:
  struct Deleter {
    void operator()(libdeflate_compressor* c) const;
  };
  std::unique_ptr<libdeflate_compressor, Deleter> c_;
};

/// Whole-buffer inflate of one zlib stream (libdeflate, ~2x zlib's inflate), checking it fills
/// exactly the expected length: for pack segments, whose raw length the index records.
class ZlibDecompressor {
 public:
  ZlibDecompressor();
  ~ZlibDecompressor();
  ZlibDecompressor(const ZlibDecompressor&) = delete;
  ZlibDecompressor& operator=(const ZlibDecompressor&) = delete;

  /// Inflates the stream of `in_n` bytes into `out`, which must come out exactly `out_n` bytes with
  /// every input byte used. nullptr on success, else why not (for an error message).
  const char* decompress_exact(const void* in, size_t in_n, void* out, size_t out_n);

 private:
  libdeflate_decompressor* d_;
};

}  // namespace ascprof::store::detail
