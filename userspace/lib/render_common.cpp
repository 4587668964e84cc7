#include <cstdio>

#include "hwsig/render.h"

namespace hwsig {

bool scope_visible(const std::string &scope, const RenderOptions &opt)
{
	if (!opt.vm.empty()) {
		// A VM view: that VM's scopes plus the host-wide context; once
		// it is gone, the host's only (vm_gone says so).
		return scope == "system" || (opt.vm_gone.empty() && scope == "vm:" + opt.vm);
	}
	if (!opt.per_cpu && scope.rfind("cpu:", 0) == 0)
		return false;
	return true;
}

std::string json_escape(const std::string &s)
{
	std::string out;
	out.reserve(s.size() + 2);
	for (unsigned char ch : s) {
		switch (ch) {
		case '"': out += "\\\""; break;
		case '\\': out += "\\\\"; break;
		case '\n': out += "\\n"; break;
		case '\r': out += "\\r"; break;
		case '\t': out += "\\t"; break;
		default:
			if (ch < 0x20) {
				char buf[8];
				std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
				out += buf;
			} else {
				out.push_back(static_cast<char>(ch));
			}
		}
	}
	return out;
}

} // namespace hwsig
