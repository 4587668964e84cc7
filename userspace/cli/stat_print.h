// Printing one interval as stat and replay do: the form's text on stdout,
// and for --compact the unavailable notes on stderr, so that stdout stays
// one line per interval.
#pragma once

#include "hwsig/render_stat.h"

namespace hwsigctl {

void print_stat_interval(const hwsig::Interval &iv, hwsig::RenderOptions &render, const hwsig::Thresholds &thresholds,
			 hwsig::StatForm form);

} // namespace hwsigctl
