// Text histograms in the layout of libbpf-tools (runqlat, biolatency):
// "     usecs               : count    distribution" and one row per slot
// with a bar of stars. What hwsigctl hist prints.
#pragma once

#include <cstdio>

#include "hwsig/histogram.h"

namespace hwsig {

// libbpf-tools' print_log2_hist(), byte for byte in layout, for a Log2
// histogram: slot 0 prints as "0 -> 1", slot k as "2^k -> 2^(k+1)-1", from
// slot 0 to the highest non-empty slot; nothing when empty. val_type names
// the unit ("usecs", "msecs", "kbytes").
void print_log2_hist(std::FILE *out, const Histogram &h, const char *val_type);

// The same rows with each slot's bounds divided by divisor and printed with
// three decimals: microsecond slots shown in milliseconds (divisor 1000,
// "0.512 -> 1.023") when the slots cannot be re-cut, as hwsigd's cannot.
void print_log2_hist_scaled(std::FILE *out, const Histogram &h, const char *val_type, double divisor);

// A LinearLog2 histogram (the vhost queue depths): one row per depth below
// Histogram::kLinearLog2Exact, "low -> high" rows above, from the lowest to
// the highest non-empty slot; nothing when empty.
void print_linear_log2_hist(std::FILE *out, const Histogram &h, const char *val_type);

} // namespace hwsig
