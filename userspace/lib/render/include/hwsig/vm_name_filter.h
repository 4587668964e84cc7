// Which VMs a view shows: top's --filter and stat's --vm take VM names or
// shell globs (fnmatch(3)), comma-separated: "web*", "db0[1-3]", "web*,db01".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwsig {

class VmNameFilter {
public:
	VmNameFilter() = default;
	// nullopt for text with an empty glob ("", "web*,,db01").
	static std::optional<VmNameFilter> parse(const std::string &text);
	bool empty() const { return globs_.empty(); } // matches every name
	bool matches(std::string_view name) const;
	// One name without glob characters: the view of exactly one VM.
	bool one_name() const;
	const std::string &text() const { return text_; } // as typed
	bool operator==(const VmNameFilter &) const = default;

private:
	std::vector<std::string> globs_;
	std::string text_;
};

} // namespace hwsig
