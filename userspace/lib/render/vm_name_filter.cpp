#include "hwsig/vm_name_filter.h"

#include <fnmatch.h>

#include <algorithm>

namespace hwsig {

std::optional<VmNameFilter> VmNameFilter::parse(const std::string &text)
{
	VmNameFilter f;
	f.text_ = text;
	std::size_t at = 0;
	for (;;) {
		const std::size_t comma = std::min(text.find(',', at), text.size());
		std::string glob = text.substr(at, comma - at);
		if (glob.empty())
			return std::nullopt;
		f.globs_.push_back(std::move(glob));
		if (comma == text.size())
			return f;
		at = comma + 1;
	}
}

bool VmNameFilter::matches(std::string_view name) const
{
	if (globs_.empty())
		return true;
	const std::string n(name);
	for (const std::string &g : globs_)
		if (fnmatch(g.c_str(), n.c_str(), 0) == 0)
			return true;
	return false;
}

bool VmNameFilter::one_name() const
{
	return globs_.size() == 1 && globs_[0].find_first_of("*?[\\") == std::string::npos;
}

} // namespace hwsig
