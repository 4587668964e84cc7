#include "stat_print.h"

#include <cstdio>
#include <string>

namespace hwsigctl {

void print_stat_interval(const hwsig::Interval &iv, hwsig::RenderOptions &render, const hwsig::Thresholds &thresholds,
			 hwsig::StatForm form)
{
	std::string notes;
	render.compact_notes = &notes;
	const std::string text = hwsig::render_stat_interval(iv, render, thresholds, form);
	render.compact_notes = nullptr;
	std::fputs(notes.c_str(), stderr);
	std::fputs(text.c_str(), stdout);
	std::fflush(stdout);
}

} // namespace hwsigctl
