// gzip for /metrics: a scrape of a big host's exposition shrinks about
// tenfold (Documentation/prometheus.rst, "Formats").
#pragma once

#include <string>
#include <string_view>

namespace hwsigd {

// From a client's Accept-Encoding: gzip (or x-gzip) with q > 0, or * with
// q > 0 when gzip is not named.
bool accepts_gzip(std::string_view accept_encoding);

// One gzip member (RFC 1952) of plain, as `gzip -1` writes it. Throws
// std::runtime_error with zlib's message if zlib fails (out of memory).
std::string gzip(std::string_view plain);

} // namespace hwsigd
