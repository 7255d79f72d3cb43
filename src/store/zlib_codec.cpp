// The store's zlib-format compressor (see zlib_codec.hpp for why libdeflate).
#include "zlib_codec.hpp"

#include <libdeflate.h>

namespace ascprof::store::detail {

void ZlibCompressor::Deleter::operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }

ZlibCompressor::ZlibCompressor(int level) : c_(libdeflate_alloc_compressor(level)) {}
ZlibCompressor::~ZlibCompressor() = default;
ZlibCompressor::ZlibCompressor(ZlibCompressor&&) noexcept = default;
ZlibCompressor& ZlibCompressor::operator=(ZlibCompressor&&) noexcept = default;

size_t ZlibCompressor::bound(size_t n) { return libdeflate_zlib_compress_bound(c_.get(), n); }

size_t ZlibCompressor::compress_into(const void* data, size_t n, unsigned char* out, size_t capacity) {
  if (!c_) return 0;
  return libdeflate_zlib_compress(c_.get(), data, n, out, capacity);
}

bool ZlibCompressor::compress(const void* data, size_t n, std::vector<unsigned char>& out) {
  if (!c_) return false;
  out.resize(bound(n));
  const size_t got = compress_into(data, n, out.data(), out.size());
  if (got == 0) return false;  // cannot happen with a bound-sized buffer
  out.resize(got);
  return true;
}

ZlibDecompressor::ZlibDecompressor() : d_(libdeflate_alloc_decompressor()) {}
ZlibDecompressor::~ZlibDecompressor() { libdeflate_free_decompressor(d_); }

const char* ZlibDecompressor::decompress_exact(const void* in, size_t in_n, void* out, size_t out_n) {
  if (d_ == nullptr) return "the decompressor could not be allocated (out of memory?)";
  size_t used = 0, made = 0;
  switch (libdeflate_zlib_decompress_ex(d_, in, in_n, out, out_n, &used, &made)) {
    case LIBDEFLATE_SUCCESS: break;
    case LIBDEFLATE_INSUFFICIENT_SPACE: return "inflates to more than its raw length";
    case LIBDEFLATE_SHORT_OUTPUT: return "inflates to less than its raw length";
    default: return "does not inflate (not a valid zlib stream, or its checksum does not match)";
  }
  if (made != out_n) return "inflates to less than its raw length";
  if (used != in_n) return "has bytes after its zlib stream";
  return nullptr;
}

}  // namespace ascprof::store::detail
