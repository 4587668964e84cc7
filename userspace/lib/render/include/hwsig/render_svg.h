// A Plot (plot.h) as one self-contained SVG document: no scripts, fonts,
// links or stylesheets, only inline attributes, so a browser opens it from
// a mail attachment as it is. The same Plot gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "hwsig/plot.h"

namespace hwsig {

// Where things go, in SVG user units (= CSS pixels at 100% zoom). The
// renderer draws from this and tests check the drawing against it.
struct SvgBox {
	double x = 0, y = 0, w = 0, h = 0;
};

struct SvgLayout {
	double width = 0, height = 0;
	std::vector<SvgBox> panels; // the frames, in the plot's panel order
	double t_min_s = 0, t_max_s = 0; // the x axis' range: the frames' left and right edges
	// x of a time in seconds from the trigger (the same in every panel).
	double x_of(double t_s) const;
};

SvgLayout svg_layout(const Plot &plot);

// Colours: the trigger line, the frames, and the series by their index in
// Plot::scopes: a palette of nine, then again with a dash pattern (empty:
// solid) for the next nine, and so on. No series colour is the trigger's red.
inline constexpr const char *kSvgTriggerColour = "#d62728";
inline constexpr const char *kSvgFrameColour = "#333333";
std::string svg_series_colour(std::size_t scope_index);
std::string svg_series_dash(std::size_t scope_index);

std::string render_svg(const Plot &plot);

// Text for an SVG text node or attribute value: & < > " ' escaped,
// control characters (invalid in XML) replaced by U+FFFD.
std::string svg_escape(const std::string &s);

// Round numbers for an axis from lo to hi: about `target` steps of 1, 2,
// 2.5 or 5 times a power of ten, the first <= lo and the last >= hi.
std::vector<double> nice_ticks(double lo, double hi, int target);

} // namespace hwsig
