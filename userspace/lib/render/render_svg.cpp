// hwsigctl plot's drawing (render_svg.h): panels stacked on one time axis,
// the trigger a red line through all of them. Every number is printed with
// a fixed precision and every list is in the Plot's order, so the output
// is byte-identical for the same Plot (golden tests, diffs of two dumps).
#include "hwsig/render_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iterator>

#include "hwsig/units.h"

namespace hwsig {

namespace {

// Sizes in CSS pixels. The left margin holds y labels such as
// "1,000 switches/s" at 11 px.
constexpr double kWidth = 960;
constexpr double kLeft = 112, kRight = 24;
constexpr double kHeaderLeft = 16; // the heading starts at the page's edge: file names are long
constexpr double kTitleY = 26, kSubtitleY = 46, kLegendTop = 58, kLegendRow = 18;
constexpr double kPanelTitle = 26; // above each frame
constexpr double kFrameHeight = 140;
constexpr double kTickLabels = 20;  // below each frame
constexpr double kPanelGap = 14;
constexpr double kFooter = 34;
constexpr double kWallClockRow = 16; // under the last frame's seconds, when the dump has a wall clock
constexpr double kCharWidth = 6.6; // 11 px sans-serif, for the legend's wrapping
constexpr double kLegendLine = 22;  // long enough to show a dash pattern

// Tableau's ten without its red, which marks the trigger alone.
constexpr const char *kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
				    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
// Past the palette's end the colours repeat with a dash pattern: a host
// with a dozen VMs still tells them apart.
constexpr const char *kDashes[] = {"", "8 4", "2 3", "8 3 2 3"};
constexpr const char *kGridColour = "#e6e6e6";
constexpr const char *kThresholdColour = "#555555";

std::string num(double v)
{
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.1f", v);
	return std::string(buf) == "-0.0" ? "0.0" : buf;
}

// Seconds for a tick label, with as many decimals as the step needs.
std::string seconds_label(double t, double step)
{
	// The fewest decimals that show the step exactly (0.25 needs two).
	int decimals = 0;
	while (decimals < 6 && std::fabs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) > 1e-6)
		++decimals;
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.*f", decimals, std::fabs(t) < step / 1000 ? 0.0 : t);
	return std::string(buf) + " s";
}

// The UTC wall clock t seconds from the trigger: "18:03:49", with the
// decimals the step needs; with the date when date is set.
std::string wall_label(std::uint64_t trigger_ns, double t, double step, bool date)
{
	const double at = static_cast<double>(trigger_ns) / 1e9 + t;
	int decimals = 0;
	while (decimals < 3 && std::fabs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) > 1e-6)
		++decimals;
	const double scale = std::pow(10, decimals);
	const double rounded = std::round(at * scale) / scale;
	const auto whole = static_cast<std::time_t>(std::floor(rounded));
	struct tm tm {};
	char buf[48];
	if (!gmtime_r(&whole, &tm) || !std::strftime(buf, sizeof(buf), date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm))
		return "?";
	std::string out = buf;
	if (decimals > 0) {
		char frac[16];
		std::snprintf(frac, sizeof(frac), "%.*f", decimals, rounded - std::floor(rounded));
		out += frac + 1; // "0.25" -> ".25"
	}
	return out;
}

std::string value_label(double v, const std::string &unit)
{
	if (v == 0)
		return "0";
	const HumanValue h = humanize(v, unit);
	return h.unit.empty() ? h.number : h.number + " " + h.unit;
}

struct YAxis {
	double lo = 0, hi = 1;
	std::vector<double> ticks;
	bool threshold_shown = false;
};

// From zero (or the lowest value, when below) to above the highest value,
// the threshold included when it is near enough not to squash the data.
YAxis y_axis(const PlotPanel &p)
{
	double lo = 0, hi = -INFINITY;
	for (const auto &s : p.series)
		for (const auto &run : s.runs)
			for (const auto &pt : run) {
				lo = std::min(lo, pt.value);
				hi = std::max(hi, pt.value);
			}
	YAxis a;
	if (!std::isfinite(hi))
		hi = 0;
	if (p.threshold && *p.threshold >= lo && *p.threshold <= std::max(3 * hi, hi + 1e-12)) {
		hi = std::max(hi, *p.threshold);
		a.threshold_shown = true;
	}
	if (hi <= lo)
		hi = lo + (lo == 0 ? 1 : std::fabs(lo));
	// 5% headroom so a flat series does not hide under the frame's top
	// edge, except past a share's natural top (100%): PSI at 100% on the
	// edge is what it is.
	const double cap = p.unit == "%" ? 100 : p.unit == "ratio" ? 1 : INFINITY;
	hi = hi <= cap ? std::min(hi + 0.05 * (hi - lo), cap) : hi + 0.05 * (hi - lo);
	a.ticks = nice_ticks(lo, hi, 4);
	a.lo = a.ticks.front();
	a.hi = a.ticks.back();
	a.threshold_shown = a.threshold_shown && *p.threshold >= a.lo && *p.threshold <= a.hi;
	return a;
}

struct Legend {
	std::vector<std::pair<double, double>> at; // (x, y) of each scope's swatch
	double height = 0;
};

Legend legend(const Plot &plot)
{
	Legend l;
	double x = kHeaderLeft, y = kLegendTop;
	for (const auto &scope : plot.scopes) {
		const double w = kLegendLine + 6 + kCharWidth * static_cast<double>(display_width(scope)) + 16;
		if (x + w > kWidth - kRight && x > kHeaderLeft) {
			x = kHeaderLeft;
			y += kLegendRow;
		}
		l.at.emplace_back(x, y);
		x += w;
	}
	l.height = plot.scopes.empty() ? 0 : y - kLegendTop + kLegendRow;
	return l;
}

// Below the legend: a row for the trigger's label, above the first
// panel's title.
constexpr double kTriggerLabelRow = 22;
double top_of_panels(const Plot &plot) { return kLegendTop + legend(plot).height + kTriggerLabelRow; }

std::size_t scope_index(const Plot &plot, const std::string &scope)
{
	return static_cast<std::size_t>(std::find(plot.scopes.begin(), plot.scopes.end(), scope) - plot.scopes.begin());
}

void text(std::string &out, double x, double y, const std::string &s, const std::string &attrs = "")
{
	out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (attrs.empty() ? "" : " " + attrs) + ">" +
	       svg_escape(s) + "</text>\n";
}

void line(std::string &out, double x1, double y1, double x2, double y2, const std::string &attrs)
{
	out += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\" " +
	       attrs + "/>\n";
}

void panel(std::string &out, const Plot &plot, const PlotPanel &p, const SvgBox &b, const SvgLayout &lay,
	   const std::vector<double> &t_ticks, double t_step)
{
	out += "<g class=\"panel\" data-metric=\"" + svg_escape(p.id) + "\">\n";
	text(out, b.x, b.y - 8, p.id + "  " + p.description + " (" + p.unit + ")",
	     "font-size=\"12\" font-weight=\"bold\" fill=\"#222222\"");
	const YAxis a = p.absent.empty() ? y_axis(p) : YAxis{};
	auto y_of = [&](double v) { return b.y + b.h - (v - a.lo) / (a.hi - a.lo) * b.h; };
	for (double t : t_ticks) {
		const double x = lay.x_of(t);
		line(out, x, b.y, x, b.y + b.h, std::string("stroke=\"") + kGridColour + "\"");
		text(out, x, b.y + b.h + 14, seconds_label(t, t_step), "text-anchor=\"middle\" fill=\"#444444\"");
	}
	if (p.absent.empty()) {
		for (double v : a.ticks) {
			const double y = y_of(v);
			line(out, b.x, y, b.x + b.w, y, std::string("stroke=\"") + kGridColour + "\"");
			text(out, b.x - 6, y + 4, value_label(v, p.unit), "text-anchor=\"end\" fill=\"#444444\"");
		}
	}
	out += "<rect class=\"frame\" x=\"" + num(b.x) + "\" y=\"" + num(b.y) + "\" width=\"" + num(b.w) +
	       "\" height=\"" + num(b.h) + "\" fill=\"none\" stroke=\"" + kSvgFrameColour + "\"/>\n";
	if (!p.absent.empty()) {
		text(out, b.x + b.w / 2, b.y + b.h / 2, p.absent,
		     "class=\"absent\" text-anchor=\"middle\" font-size=\"13\" fill=\"#666666\"");
		out += "</g>\n";
		return;
	}
	if (p.threshold) {
		const std::string label = "threshold " + value_label(*p.threshold, p.unit);
		if (a.threshold_shown) {
			const double y = y_of(*p.threshold);
			line(out, b.x, y, b.x + b.w, y,
			     std::string("class=\"threshold\" stroke=\"") + kThresholdColour +
				     "\" stroke-width=\"1\" stroke-dasharray=\"6 4\"");
			// A white outline keeps the label readable over a series.
			text(out, b.x + b.w - 4, y - 4, label,
			     "text-anchor=\"end\" fill=\"#555555\" stroke=\"#ffffff\" stroke-width=\"3\" "
			     "paint-order=\"stroke\"");
		} else {
			text(out, b.x + b.w - 4, b.y - 8, label + " (off the scale)", "text-anchor=\"end\" fill=\"#555555\"");
		}
	}
	for (const auto &s : p.series) {
		const std::size_t index = scope_index(plot, s.scope);
		const std::string colour = svg_series_colour(index), dash = svg_series_dash(index);
		for (const auto &run : s.runs) {
			if (run.size() == 1) {
				out += "<circle class=\"series\" data-scope=\"" + svg_escape(s.scope) + "\" cx=\"" +
				       num(lay.x_of(run[0].t_s)) + "\" cy=\"" + num(y_of(run[0].value)) +
				       "\" r=\"2.5\" fill=\"" + colour + "\"/>\n";
				continue;
			}
			out += "<polyline class=\"series\" data-scope=\"" + svg_escape(s.scope) + "\" points=\"";
			for (std::size_t i = 0; i < run.size(); ++i)
				out += (i ? " " : "") + num(lay.x_of(run[i].t_s)) + "," + num(y_of(run[i].value));
			out += "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
			       (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") +
			       " stroke-linejoin=\"round\" stroke-linecap=\"round\"/>\n";
		}
	}
	out += "</g>\n";
}

} // namespace

double SvgLayout::x_of(double t_s) const
{
	if (panels.empty())
		return kLeft;
	const SvgBox &b = panels.front();
	return b.x + (t_s - t_min_s) / (t_max_s - t_min_s) * b.w;
}

SvgLayout svg_layout(const Plot &plot)
{
	SvgLayout lay;
	lay.width = kWidth;
	lay.t_min_s = plot.t_min_s;
	lay.t_max_s = plot.t_max_s > plot.t_min_s ? plot.t_max_s : plot.t_min_s + 1;
	// Frames on half pixels: their 1 px strokes then cover whole pixels.
	double y = std::floor(top_of_panels(plot)) + 0.5;
	for (std::size_t i = 0; i < plot.panels.size(); ++i) {
		y += kPanelTitle;
		lay.panels.push_back({kLeft + 0.5, y, kWidth - kLeft - kRight, kFrameHeight});
		y += kFrameHeight + kTickLabels + kPanelGap;
	}
	lay.height = std::ceil(y + kFooter + (plot.trigger_realtime_ns ? kWallClockRow : 0));
	return lay;
}

std::string svg_series_colour(std::size_t scope_index)
{
	return kPalette[scope_index % std::size(kPalette)];
}

std::string svg_series_dash(std::size_t scope_index)
{
	return kDashes[scope_index / std::size(kPalette) % std::size(kDashes)];
}

std::string svg_escape(const std::string &s)
{
	std::string out;
	out.reserve(s.size());
	for (unsigned char ch : s) {
		switch (ch) {
		case '&': out += "&amp;"; break;
		case '<': out += "&lt;"; break;
		case '>': out += "&gt;"; break;
		case '"': out += "&quot;"; break;
		case '\'': out += "&apos;"; break;
		default:
			if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
				out += "\xEF\xBF\xBD"; // U+FFFD: XML 1.0 allows no other control character
			else
				out.push_back(static_cast<char>(ch));
		}
	}
	return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target)
{
	if (!(hi > lo) || target < 1)
		return {lo, hi};
	const double raw = (hi - lo) / target;
	const double mag = std::pow(10.0, std::floor(std::log10(raw)));
	double step = 10 * mag;
	for (double m : {1.0, 2.0, 2.5, 5.0})
		if (m * mag >= raw * (1 - 1e-9)) {
			step = m * mag;
			break;
		}
	std::vector<double> ticks;
	const double first = std::floor(lo / step + 1e-9);
	for (double k = first;; ++k) {
		const double v = k * step;
		ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
		if (v >= hi * (1 - 1e-12) - step * 1e-9)
			break;
	}
	return ticks;
}

std::string render_svg(const Plot &plot)
{
	const SvgLayout lay = svg_layout(plot);
	const Legend leg = legend(plot);
	std::string out;
	out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
	out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(lay.width) + "\" height=\"" +
	       num(lay.height) + "\" viewBox=\"0 0 " + num(lay.width) + " " + num(lay.height) +
	       "\" font-family=\"sans-serif\" font-size=\"11\">\n";
	out += "<title>" + svg_escape("hwsig: " + plot.title) + "</title>\n";
	out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
	text(out, kHeaderLeft, kTitleY, "hwsig: " + plot.title, "font-size=\"16\" font-weight=\"bold\" fill=\"#111111\"");
	char span[96];
	std::snprintf(span, sizeof(span), "%.1f s before to %.1f s after the trigger", -lay.t_min_s, lay.t_max_s);
	const std::string at =
		plot.trigger_realtime_ns ? " at " + wall_label(plot.trigger_realtime_ns, 0, 1, true) + " UTC" : "";
	text(out, kHeaderLeft, kSubtitleY, "trigger: " + plot.trigger + at + "; " + span, "fill=\"#444444\"");
	for (std::size_t i = 0; i < plot.scopes.size(); ++i) {
		const auto [x, y] = leg.at[i];
		// A piece of the series' line: colour and dash as in the panels.
		const std::string dash = svg_series_dash(i);
		line(out, x, y + 6, x + kLegendLine, y + 6,
		     "class=\"legend\" data-scope=\"" + svg_escape(plot.scopes[i]) + "\" stroke=\"" + svg_series_colour(i) +
			     "\" stroke-width=\"3\"" + (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\""));
		text(out, x + kLegendLine + 6, y + 10, plot.scopes[i], "fill=\"#222222\"");
	}

	const auto all_ticks = nice_ticks(lay.t_min_s, lay.t_max_s, 8);
	const double t_step = all_ticks.size() > 1 ? all_ticks[1] - all_ticks[0] : 1;
	std::vector<double> t_ticks; // inside the frames only: the axis ends at the data
	for (double t : all_ticks)
		if (t >= lay.t_min_s - t_step * 1e-6 && t <= lay.t_max_s + t_step * 1e-6)
			t_ticks.push_back(t);
	for (std::size_t i = 0; i < plot.panels.size(); ++i)
		panel(out, plot, plot.panels[i], lay.panels[i], lay, t_ticks, t_step);

	if (!lay.panels.empty()) {
		// Whole pixels: a 2 px line centred on an integer covers two
		// columns exactly, in every panel alike.
		const double x = std::round(lay.x_of(0));
		const SvgBox &first = lay.panels.front(), &last = lay.panels.back();
		const double top = first.y - kPanelTitle - kTriggerLabelRow + 16;
		line(out, x, top, x, last.y + last.h,
		     std::string("class=\"trigger\" stroke=\"") + kSvgTriggerColour + "\" stroke-width=\"2\"");
		const bool right_half = x > lay.width / 2;
		text(out, right_half ? x - 5 : x + 5, top + 10, plot.trigger,
		     std::string("class=\"trigger-label\" text-anchor=\"") + (right_half ? "end" : "start") +
			     "\" font-weight=\"bold\" fill=\"" + kSvgTriggerColour + "\"");
		// The wall clock under the last frame's seconds: what a log line
		// or another tool's graph of the same minutes is read against.
		double caption = last.y + last.h + kTickLabels + 18;
		if (plot.trigger_realtime_ns) {
			for (double t : t_ticks)
				text(out, lay.x_of(t), last.y + last.h + 14 + kWallClockRow,
				     wall_label(plot.trigger_realtime_ns, t, t_step, false),
				     "class=\"wall-clock\" text-anchor=\"middle\" fill=\"#444444\"");
			caption += kWallClockRow;
		}
		text(out, lay.width / 2, caption,
		     plot.trigger_realtime_ns ? "seconds from the trigger, and below them the UTC wall clock"
					      : "seconds from the trigger",
		     "text-anchor=\"middle\" fill=\"#444444\"");
	}
	out += "</svg>\n";
	return out;
}

} // namespace hwsig
