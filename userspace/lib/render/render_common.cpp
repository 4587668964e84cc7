#include <cstdio>

#include "hwsig/render.h"
#include "hwsig/scope.h"

namespace hwsig {

bool scope_visible(const std::string &scope, const RenderOptions &opt)
{
	const Scope s = Scope::parse(scope);
	if (!opt.vm.empty()) {
		// A VM view: that VM's scopes (its own, its vCPUs', its disks'
		// and its culprits', vm:NAME/...) plus the host-wide context;
		// once it is gone, the host's only (vm_gone says so).
		if (s.kind() == Scope::Kind::System)
			return true;
		return opt.vm_gone.empty() && s.vm() == opt.vm;
	}
	if (!opt.vm_filter.empty())
		return s.kind() == Scope::Kind::System || (!s.vm().empty() && opt.vm_filter.matches(s.vm()));
	return opt.per_cpu || (s.kind() != Scope::Kind::Cpu && s.all_of() != Scope::Kind::Cpu);
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

std::string json_strings(const std::vector<std::string> &v)
{
	std::string out = "[";
	for (std::size_t i = 0; i < v.size(); i++)
		out += (i ? ",\"" : "\"") + json_escape(v[i]) + "\"";
	return out + "]";
}

} // namespace hwsig

#include "hwsig/units.h"

namespace hwsig {

std::string wrap(const std::string &text, std::size_t first_used, std::size_t indent, std::size_t width)
{
	std::string out;
	std::size_t col = first_used;
	bool line_start = true;
	for (std::size_t at = 0; at < text.size();) {
		std::size_t sp = text.find(' ', at);
		if (sp == std::string::npos)
			sp = text.size();
		const std::string word = text.substr(at, sp - at);
		at = sp + 1;
		if (word.empty())
			continue;
		const std::size_t w = display_width(word);
		if (!line_start && col + 1 + w > width) {
			out += "\n" + std::string(indent, ' ');
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			out += ' ';
			++col;
		}
		out += word;
		col += w;
		line_start = false;
	}
	return out;
}

std::string render_verdict_lines(const RenderOptions &opt)
{
	std::string out;
	if (!opt.verdicts)
		return out;
	for (std::size_t i = 0; i < opt.verdicts->lines.size() && i < kMaxVerdictLines; ++i) {
		const std::string body = wrap(opt.verdicts->lines[i], 2, 4);
		out += opt.color ? "\033[1;31m! " + body + "\033[0m\n" : "! " + body + "\n";
	}
	return out;
}

} // namespace hwsig
