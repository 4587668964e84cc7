#include "columns.h"

#include <algorithm>

#include "hwsig/units.h"

namespace hwsigctl {

std::string format_columns(const std::vector<std::vector<std::string>> &rows,
			   const std::vector<std::size_t> &right_aligned)
{
	std::vector<std::size_t> width;
	for (const auto &r : rows) {
		width.resize(std::max(width.size(), r.size()), 0);
		for (std::size_t i = 0; i < r.size(); i++)
			width[i] = std::max(width[i], hwsig::display_width(r[i]));
	}
	std::string out;
	for (const auto &r : rows) {
		std::string line;
		for (std::size_t i = 0; i < r.size(); i++) {
			const bool right = std::find(right_aligned.begin(), right_aligned.end(), i) != right_aligned.end();
			const std::string pad(width[i] - hwsig::display_width(r[i]), ' ');
			line += right ? pad + r[i] : r[i] + (i + 1 < r.size() ? pad : "");
			if (i + 1 < r.size())
				line += "  ";
		}
		line.erase(line.find_last_not_of(' ') + 1);
		out += line + "\n";
	}
	return out;
}

} // namespace hwsigctl
