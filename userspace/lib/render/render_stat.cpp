#include "hwsig/render_stat.h"

#include "hwsig/verdicts.h"

namespace hwsig {

std::string render_stat_interval(const Interval &iv, RenderOptions &opt, const Thresholds &thresholds, StatForm form)
{
	const Verdicts verdicts =
		judge(iv, thresholds, [&](const std::string &scope) { return scope_visible(scope, opt); });
	opt.verdicts = &verdicts;
	std::string out;
	switch (form) {
	case StatForm::Json:
		out = render_json(iv, opt) + "\n";
		break;
	case StatForm::Compact:
		out = render_compact(iv, opt);
		break;
	case StatForm::Table:
		out = render_table(iv, opt) + "\n";
		break;
	}
	opt.verdicts = nullptr;
	return out;
}

} // namespace hwsig
