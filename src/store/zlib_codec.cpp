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

}  // namespace ascprof::store::detail
