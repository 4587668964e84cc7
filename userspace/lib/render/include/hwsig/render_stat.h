// One interval as 'hwsigctl stat' prints it (verdicts judged on the shown
// scopes, then the table, compact line or JSON line): also what
// 'hwsigctl replay' and 'hwsigd --print-intervals' print, so that a replay
// is exactly what was seen live.
#pragma once

#include <string>

#include "hwsig/derive.h"
#include "hwsig/render.h"
#include "hwsig/thresholds.h"

namespace hwsig {

enum class StatForm { Table, Compact, Json };

// opt's verdicts pointer is set for the call and cleared after; its said
// and compact_lines state (if any) is updated. The text ends in '\n'.
std::string render_stat_interval(const Interval &iv, RenderOptions &opt, const Thresholds &thresholds, StatForm form);

} // namespace hwsig
