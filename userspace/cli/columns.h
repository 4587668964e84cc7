// Plain aligned columns for the listing commands (vms, metrics).
#pragma once

#include <string>
#include <vector>

namespace hwsigctl {

// rows[0] is the header. A column listed in right_aligned is padded on the
// left (numbers); the last column is never padded. Widths count UTF-8
// characters, not bytes ("× 64" is four wide).
std::string format_columns(const std::vector<std::vector<std::string>> &rows,
			   const std::vector<std::size_t> &right_aligned = {});

} // namespace hwsigctl
