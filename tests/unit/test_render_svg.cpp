// hwsigctl plot (plot.h, render_svg.h): which panels and series a dump's
// intervals give, where the trigger line and the frames go, breaks in the
// lines, escaping of user text, and byte-identical output.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "hwsig/docs.h"
#include "hwsig/plot.h"
#include "hwsig/render_svg.h"

using namespace hwsig;

namespace {

constexpr std::uint64_t kSecond = 1'000'000'000ull;
constexpr std::uint64_t kT0 = 5000 * kSecond; // the first snapshot's mono_ns
// Its wall clock: 2026-11-28 18:03:40 UTC.
constexpr std::uint64_t kWall0 = 1795889020ULL * kSecond;

Metric metric(const std::string &id, const std::string &scope, double value, const std::string &unit)
{
	Metric m;
	m.id = id;
	m.scope = scope;
	m.value = value;
	m.unit = unit;
	return m;
}

// n one-second intervals from kT0; fill(i, iv) adds interval i's metrics.
template <typename F> std::vector<PlotInterval> intervals(std::size_t n, F fill)
{
	std::vector<PlotInterval> out;
	for (std::size_t i = 0; i < n; ++i) {
		PlotInterval p;
		p.start_mono_ns = kT0 + i * kSecond;
		p.end_mono_ns = p.start_mono_ns + kSecond;
		p.iv.interval_s = 1;
		p.iv.realtime_ns = kWall0 + (i + 1) * kSecond;
		fill(i, p.iv);
		out.push_back(std::move(p));
	}
	return out;
}

std::size_t count(const std::string &hay, const std::string &needle)
{
	std::size_t n = 0;
	for (auto pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + needle.size()))
		++n;
	return n;
}

std::vector<std::string> attrs(const std::string &svg, const std::string &element_re, const std::string &attr)
{
	std::vector<std::string> out;
	const std::regex re(element_re);
	for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
		const std::string el = it->str();
		const std::regex a(" " + attr + "=\"([^\"]*)\"");
		std::smatch m;
		if (std::regex_search(el, m, a))
			out.push_back(m[1]);
	}
	return out;
}

// A host with two VMs and a disk, 10 intervals, trigger at the end.
std::vector<PlotInterval> incident()
{
	return intervals(10, [](std::size_t i, Interval &iv) {
		const double x = static_cast<double>(i);
		iv.metrics.push_back(metric("cpu.ipc", "system", 1.5 - 0.1 * x, "insn/cycle"));
		iv.metrics.push_back(metric("cpu.ipc", "vm:web01", 1.2, "insn/cycle"));
		iv.metrics.push_back(metric("cpu.ipc", "vm:db", 0.9, "insn/cycle"));
		iv.metrics.push_back(metric("cpu.ipc", "cpu:0", 2.0, "insn/cycle")); // not plotted
		iv.metrics.push_back(metric("psi.cpu_some_pct", "system", 5 + x, "%"));
		iv.metrics.push_back(metric("mem.thp_anon_bytes", "system", 1 << 20, "B")); // not a default
		iv.metrics.push_back(metric("sched.runq_wait_p99_us", "system", 100 * (x + 1), "us"));
		iv.metrics.push_back(metric("sched.runq_wait_p99_us", "vm:web01", 50, "us"));
		iv.metrics.push_back(metric("io.latency_p99_us", "dev:vda", 300, "us"));
		iv.unavailable.push_back({"vhost.queue_depth_p99", "system", UnavailableCode::no_target, "vhost_net is not loaded"});
	});
}

PlotRequest request(std::uint64_t trigger_mono_ns = kT0 + 10 * kSecond)
{
	PlotRequest r;
	r.title = "incident.hwsd";
	r.trigger = "SIGUSR1";
	r.trigger_mono_ns = trigger_mono_ns;
	return r;
}

std::vector<std::string> panel_ids(const Plot &p)
{
	std::vector<std::string> ids;
	for (const auto &panel : p.panels)
		ids.push_back(panel.id);
	return ids;
}

const PlotPanel &panel_of(const Plot &p, const std::string &id)
{
	for (const auto &panel : p.panels)
		if (panel.id == id)
			return panel;
	FAIL("no panel " << id);
	return p.panels.front();
}

} // namespace

TEST_CASE("plot: the default panels are the defaults present in the dump, in their order", "[plot]")
{
	const Plot p = build_plot(incident(), request());
	CHECK(panel_ids(p) ==
	      std::vector<std::string>{"cpu.ipc", "sched.runq_wait_p99_us", "psi.cpu_some_pct", "io.latency_p99_us"});
	// Host first, then the VMs by name, then the rest; no cpu:N.
	CHECK(p.scopes == std::vector<std::string>{"system", "vm:db", "vm:web01", "dev:vda"});
	CHECK(p.t_min_s == Approx(-10));
	CHECK(p.t_max_s == Approx(0));
	const std::string svg = render_svg(p);
	CHECK(count(svg, "<g class=\"panel\"") == 4);
	CHECK(attrs(svg, "<g class=\"panel\"[^>]*>", "data-metric") == panel_ids(p));
	CHECK(count(svg, "<rect class=\"frame\"") == 4);
}

TEST_CASE("plot: --metrics chooses the panels and their order, an absent one says why", "[plot]")
{
	auto req = request();
	req.metrics = {"psi.cpu_some_pct", "vhost.queue_depth_p99", "mem.thp_anon_bytes"};
	const Plot p = build_plot(incident(), req);
	CHECK(panel_ids(p) == req.metrics);
	CHECK(p.panels[1].series.empty());
	CHECK(p.panels[1].absent == "not in this dump: vhost_net is not loaded");
	req.metrics = {"io.iops_read"}; // no value and no reason in the dump
	CHECK(build_plot(incident(), req).panels[0].absent == "not in this dump");
	const std::string svg = render_svg(build_plot(incident(), req));
	CHECK(count(svg, "class=\"absent\"") == 1);
	CHECK(count(svg, ">not in this dump</text>") == 1);
}

TEST_CASE("plot: an unknown metric id is refused, naming it and the ids close to it", "[plot]")
{
	auto req = request();
	req.metrics = {"cpu.ipc", "cpu.ipx"};
	CHECK_THROWS_WITH(build_plot(incident(), req), Catch::StartsWith("unknown metric 'cpu.ipx' (did you mean: cpu.ipc"));
	req.metrics = {"runq_wait_p99"};
	CHECK_THROWS_WITH(build_plot(incident(), req), Catch::Contains("sched.runq_wait_p99_us"));
	req.metrics = {"zzzzzzzzzz"};
	CHECK_THROWS_WITH(build_plot(incident(), req),
			  "unknown metric 'zzzzzzzzzz'; the ids are in " HWSIG_DOC("metrics.rst"));
	CHECK(close_metric_ids("psi.cpu_some").front() == "psi.cpu_some_pct");
	// A near miss alone; without one, the ids of the layer named.
	CHECK(close_metric_ids("cpu.ipz") == std::vector<std::string>{"cpu.ipc"});
	const auto layer = close_metric_ids("vhost.nothing_like_it");
	CHECK(!layer.empty());
	for (const auto &id : layer)
		CHECK(id.rfind("vhost.", 0) == 0);
}

TEST_CASE("plot: a dump without any default metric is refused, pointing at --metrics", "[plot]")
{
	auto only_thp = intervals(3, [](std::size_t, Interval &iv) {
		iv.metrics.push_back(metric("mem.thp_anon_bytes", "system", 1, "B"));
	});
	CHECK_THROWS_WITH(build_plot(only_thp, request(kT0 + 3 * kSecond)), Catch::EndsWith("choose some with --metrics"));
}

TEST_CASE("plot: one series per scope, --vm keeps the host and that VM only", "[plot]")
{
	const Plot all = build_plot(incident(), request());
	const auto &ipc = panel_of(all, "cpu.ipc");
	REQUIRE(ipc.series.size() == 3);
	CHECK(ipc.series[0].scope == "system");
	CHECK(ipc.series[1].scope == "vm:db");
	CHECK(ipc.series[2].scope == "vm:web01");
	const std::string svg = render_svg(all);
	// Each scope its own colour, the same in every panel and in the legend.
	const auto scopes = attrs(svg, "<polyline[^>]*>", "data-scope");
	const auto colours = attrs(svg, "<polyline[^>]*>", "stroke");
	REQUIRE(scopes.size() == 7); // ipc 3, runq 2, psi 1, io 1
	for (std::size_t i = 0; i < scopes.size(); ++i) {
		const auto at = std::find(all.scopes.begin(), all.scopes.end(), scopes[i]) - all.scopes.begin();
		CHECK(colours[i] == svg_series_colour(static_cast<std::size_t>(at)));
		CHECK(colours[i] != kSvgTriggerColour);
	}
	CHECK(attrs(svg, "<line[^>]*class=\"legend\"[^>]*>", "data-scope") == all.scopes);
	CHECK(attrs(svg, "<line[^>]*class=\"legend\"[^>]*>", "stroke") ==
	      std::vector<std::string>{svg_series_colour(0), svg_series_colour(1), svg_series_colour(2),
				       svg_series_colour(3)});
	CHECK(svg_series_colour(0) != svg_series_colour(1));

	auto req = request();
	req.vm = "web01";
	const Plot one = build_plot(incident(), req);
	CHECK(one.scopes == std::vector<std::string>{"system", "vm:web01", "dev:vda"});
	CHECK(panel_of(one, "cpu.ipc").series.size() == 2);
	req.vm = "nosuch";
	CHECK_THROWS_WITH(build_plot(incident(), req), "no values for a VM named 'nosuch'");
}

TEST_CASE("plot: past nine scopes the colours repeat dashed, in the panels and the legend", "[plot]")
{
	auto iv = intervals(3, [](std::size_t, Interval &in) {
		for (int v = 0; v < 11; ++v)
			in.metrics.push_back(metric("cpu.ipc", "vm:g" + std::to_string(10 + v), 1, "insn/cycle"));
	});
	const Plot p = build_plot(iv, request(kT0 + 3 * kSecond));
	REQUIRE(p.scopes.size() == 11);
	CHECK(svg_series_colour(9) == svg_series_colour(0));
	CHECK(svg_series_dash(0).empty());
	CHECK(!svg_series_dash(9).empty());
	const std::string svg = render_svg(p);
	const auto dashes = attrs(svg, "<polyline[^>]*>", "stroke-dasharray");
	CHECK(dashes == std::vector<std::string>{svg_series_dash(9), svg_series_dash(10)});
	CHECK(attrs(svg, "<line[^>]*class=\"legend\"[^>]*>", "stroke-dasharray") == dashes);
	// (colour, dash) pairs are all different.
	std::set<std::string> styles;
	for (std::size_t i = 0; i < p.scopes.size(); ++i)
		styles.insert(svg_series_colour(i) + "/" + svg_series_dash(i));
	CHECK(styles.size() == p.scopes.size());
}

TEST_CASE("plot: the trigger line is at the trigger's time, through every panel", "[plot]")
{
	// Intervals cover -3 s .. +7 s around a trigger 3 s after the first snapshot.
	const Plot p = build_plot(incident(), request(kT0 + 3 * kSecond));
	CHECK(p.t_min_s == Approx(-3));
	CHECK(p.t_max_s == Approx(7));
	const SvgLayout lay = svg_layout(p);
	REQUIRE(lay.panels.size() == 4);
	const SvgBox &f = lay.panels.front(), &l = lay.panels.back();
	CHECK(lay.x_of(-3) == Approx(f.x));
	CHECK(lay.x_of(7) == Approx(f.x + f.w));
	const double expected = std::round(f.x + 0.3 * f.w);
	const std::string svg = render_svg(p);
	const auto x1 = attrs(svg, "<line[^>]*class=\"trigger\"[^>]*>", "x1");
	const auto x2 = attrs(svg, "<line[^>]*class=\"trigger\"[^>]*>", "x2");
	const auto y1 = attrs(svg, "<line[^>]*class=\"trigger\"[^>]*>", "y1");
	const auto y2 = attrs(svg, "<line[^>]*class=\"trigger\"[^>]*>", "y2");
	REQUIRE(x1.size() == 1);
	CHECK(std::stod(x1[0]) == expected);
	CHECK(std::stod(x2[0]) == expected);
	CHECK(std::stod(y1[0]) < f.y);
	CHECK(std::stod(y2[0]) == Approx(l.y + l.h));
	CHECK(count(svg, ">SIGUSR1</text>") == 1);
	// Frames: the same x range, stacked without overlap, inside the page.
	for (std::size_t i = 1; i < lay.panels.size(); ++i) {
		CHECK(lay.panels[i].x == f.x);
		CHECK(lay.panels[i].w == f.w);
		CHECK(lay.panels[i].y > lay.panels[i - 1].y + lay.panels[i - 1].h);
	}
	CHECK(l.y + l.h < lay.height);
	CHECK(f.x + f.w < lay.width);
	// A tick at the trigger, labelled 0 s.
	CHECK(count(svg, ">0 s</text>") == 4);
	CHECK(count(svg, ">-2 s</text>") == 4);
}

TEST_CASE("plot: time tick labels show the step's decimals", "[plot]")
{
	// Two seconds at 0.25 s: ticks every 0.25 s, labels with two decimals.
	std::vector<PlotInterval> iv;
	for (std::uint64_t i = 0; i < 8; ++i) {
		PlotInterval p;
		p.start_mono_ns = kT0 + i * kSecond / 4;
		p.end_mono_ns = p.start_mono_ns + kSecond / 4;
		p.iv.metrics.push_back(metric("psi.cpu_some_pct", "system", 1, "%"));
		iv.push_back(std::move(p));
	}
	const std::string svg = render_svg(build_plot(iv, request(kT0 + 2 * kSecond)));
	CHECK(count(svg, ">-0.25 s</text>") == 1);
	CHECK(count(svg, ">-1.50 s</text>") == 1);
	CHECK(count(svg, ">0.00 s</text>") == 1);
	CHECK(count(svg, ">-2.00 s</text>") == 1);
}

TEST_CASE("plot: a missing value or a hole in the recording breaks the line", "[plot]")
{
	auto iv = intervals(8, [](std::size_t i, Interval &in) {
		if (i != 2) // no value in interval 2 (an idle disk has no p99)
			in.metrics.push_back(metric("io.latency_p99_us", "dev:vda", 100 + static_cast<double>(i), "us"));
		if (i != 7)
			in.metrics.push_back(metric("psi.cpu_some_pct", "system", 3, "%"));
	});
	// Interval 5 lasts 4 s: the daemon was stopped in between.
	for (std::size_t i = 5; i < iv.size(); ++i) {
		iv[i].start_mono_ns += (i == 5 ? 0 : 3 * kSecond);
		iv[i].end_mono_ns += 3 * kSecond;
	}
	auto req = request(iv.back().end_mono_ns);
	req.metrics = {"io.latency_p99_us", "psi.cpu_some_pct"};
	const Plot p = build_plot(iv, req);
	const auto &io = p.panels[0].series.at(0).runs;
	REQUIRE(io.size() == 3);
	CHECK(io[0].size() == 2); // intervals 0, 1
	CHECK(io[1].size() == 2); // 3, 4
	CHECK(io[2].size() == 3); // 5 (after the hole), 6, 7
	CHECK(io[2][0].t_s == Approx(-2));
	CHECK(io[2][0].value == 105);
	const auto &psi = p.panels[1].series.at(0).runs;
	REQUIRE(psi.size() == 2);
	CHECK(psi[1].size() == 2); // 5, 6
	const std::string svg = render_svg(p);
	CHECK(count(svg, "<polyline class=\"series\" data-scope=\"dev:vda\"") == 3);

	// A run of one point is drawn as a dot.
	auto lone = intervals(3, [](std::size_t i, Interval &in) {
		if (i == 1)
			in.metrics.push_back(metric("psi.cpu_some_pct", "system", 3, "%"));
	});
	const std::string dot = render_svg(build_plot(lone, request(kT0 + 3 * kSecond)));
	CHECK(count(dot, "<circle class=\"series\"") == 1);
	CHECK(count(dot, "<polyline") == 0);
}

TEST_CASE("plot: user text is escaped: VM names, the trigger, the title", "[plot]")
{
	const std::string name = "a<b>&\"c'";
	auto iv = intervals(3, [&](std::size_t, Interval &in) {
		in.metrics.push_back(metric("cpu.ipc", "vm:" + name, 1, "insn/cycle"));
	});
	auto req = request(kT0 + 3 * kSecond);
	req.trigger = "psi.cpu_some_pct > 5 & <rule>";
	req.title = "x<y>.hwsd";
	const std::string svg = render_svg(build_plot(iv, req));
	CHECK(svg.find("a<b>") == std::string::npos);
	CHECK(svg.find("<rule>") == std::string::npos);
	CHECK(svg.find("x<y>") == std::string::npos);
	CHECK(count(svg, "vm:a&lt;b&gt;&amp;&quot;c&apos;") == 3); // legend swatch, its text, the series
	CHECK(count(svg, "psi.cpu_some_pct &gt; 5 &amp; &lt;rule&gt;") == 2);
	// Every '&' starts an entity, and no '<' opens anything but an element.
	CHECK(!std::regex_search(svg, std::regex("&(?!(amp|lt|gt|quot|apos);)")));
	CHECK(!std::regex_search(svg, std::regex("<[^/?a-z]")));
	CHECK(svg_escape(std::string("a\x01z\tq")) == "a\xEF\xBF\xBDz\tq");
}

TEST_CASE("plot: the threshold is a dashed line when it is on the scale", "[plot]")
{
	Thresholds t; // runq p99 bar: 1 ms
	auto near = intervals(4, [](std::size_t i, Interval &in) {
		in.metrics.push_back(metric("sched.runq_wait_p99_us", "system", 400.0 * static_cast<double>(i), "us"));
	});
	auto req = request(kT0 + 4 * kSecond);
	req.thresholds = &t;
	const Plot p = build_plot(near, req);
	REQUIRE(p.panels[0].threshold);
	CHECK(*p.panels[0].threshold == 1000);
	const std::string svg = render_svg(p);
	CHECK(count(svg, "class=\"threshold\"") == 1);
	CHECK(count(svg, ">threshold 1.00 ms</text>") == 1);
	// The dashed line is at 1 ms on the y axis: 0 at the bottom, the axis'
	// top the first round tick at or above 1.2 ms.
	const auto y = attrs(svg, "<line[^>]*class=\"threshold\"[^>]*>", "y1");
	const SvgBox f = svg_layout(p).panels[0];
	const auto ticks = nice_ticks(0, 1200, 4);
	CHECK(std::stod(y.at(0)) == Approx(f.y + f.h - 1000 / ticks.back() * f.h).margin(0.05));

	auto far = intervals(4, [](std::size_t, Interval &in) {
		in.metrics.push_back(metric("sched.runq_wait_p99_us", "system", 20, "us"));
	});
	const std::string off = render_svg(build_plot(far, req));
	CHECK(count(off, "class=\"threshold\"") == 0);
	CHECK(count(off, "threshold 1.00 ms (off the scale)") == 1);
}

TEST_CASE("plot: the same intervals give byte-identical SVG", "[plot]")
{
	const std::string a = render_svg(build_plot(incident(), request()));
	const std::string b = render_svg(build_plot(incident(), request()));
	CHECK(a == b);
	CHECK(a.rfind("<?xml", 0) == 0);
	// Self-contained: nothing fetched, nothing run.
	CHECK(a.find("<script") == std::string::npos);
	CHECK(a.find("href") == std::string::npos);
	CHECK(a.find("@import") == std::string::npos);
	CHECK(a.find("url(") == std::string::npos);
}

TEST_CASE("plot: the UTC wall clock under the last panel's seconds and in the subtitle", "[plot]")
{
	// Triggered at kT0 + 10 s: 18:03:50 UTC; ticks every 2 s from -10 s.
	const Plot p = build_plot(incident(), request());
	CHECK(p.trigger_realtime_ns == kWall0 + 10 * kSecond);
	const std::string svg = render_svg(p);
	CHECK(svg.find("at 2026-11-28 18:03:50 UTC") != std::string::npos);
	CHECK(count(svg, "class=\"wall-clock\"") == count(svg, " s</text>") / p.panels.size());
	CHECK(svg.find(">18:03:40</text>") != std::string::npos);
	CHECK(svg.find(">18:03:50</text>") != std::string::npos);
	CHECK(svg.find("and below them the UTC wall clock") != std::string::npos);
	// Ticks every 0.2 s (eighth-second intervals) carry the decimal they need.
	auto eighths = incident();
	for (auto &in : eighths) {
		in.start_mono_ns = kT0 + (in.start_mono_ns - kT0) / 8;
		in.end_mono_ns = kT0 + (in.end_mono_ns - kT0) / 8;
		in.iv.realtime_ns = kWall0 + (in.end_mono_ns - kT0);
	}
	const std::string fine = render_svg(build_plot(eighths, request(kT0 + kSecond)));
	CHECK(fine.find("at 2026-11-28 18:03:41 UTC") != std::string::npos);
	CHECK(fine.find(">18:03:40.2</text>") != std::string::npos);
	CHECK(fine.find(">18:03:41.0</text>") != std::string::npos);
	// Intervals without a wall clock (hand-made, or a stamp never taken):
	// seconds only, as before.
	auto bare = incident();
	for (auto &in : bare)
		in.iv.realtime_ns = 0;
	const Plot none = build_plot(bare, request());
	CHECK(none.trigger_realtime_ns == 0);
	const std::string plain = render_svg(none);
	CHECK(plain.find("wall-clock") == std::string::npos);
	CHECK(plain.find(" UTC") == std::string::npos);
}

// The golden file is reviewed by eye (open it in a browser) whenever the
// drawing changes on purpose: HWSIG_UPDATE_GOLDEN=1 rewrites it.
TEST_CASE("plot: a known plot renders to the reviewed golden SVG byte for byte", "[plot]")
{
	const std::string path = std::string(HWSIG_FIXTURES) + "/plot/incident.svg";
	auto req = request(kT0 + 7 * kSecond);
	Thresholds t;
	req.thresholds = &t;
	req.metrics = {"cpu.ipc", "sched.runq_wait_p99_us", "io.latency_p99_us", "vhost.queue_depth_p99"};
	const std::string svg = render_svg(build_plot(incident(), req));
	if (std::getenv("HWSIG_UPDATE_GOLDEN")) {
		std::ofstream(path, std::ios::binary) << svg;
		WARN("rewrote " << path);
	}
	std::ifstream in(path, std::ios::binary);
	REQUIRE(in);
	const std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	CHECK(svg == golden);
}

TEST_CASE("plot: round axis ticks", "[plot]")
{
	CHECK(nice_ticks(0, 7.3, 4) == std::vector<double>{0, 2, 4, 6, 8});
	CHECK(nice_ticks(-10, 0, 8) == std::vector<double>{-10, -8, -6, -4, -2, 0});
	CHECK(nice_ticks(0, 1, 4) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
	const auto big = nice_ticks(0, 3.2e9, 4);
	CHECK(big.front() == 0);
	CHECK(big.back() >= 3.2e9);
	CHECK(big.size() <= 6);
}

TEST_CASE("plot: a dump's intervals are derive()'s, the trigger the header's time or else the last snapshot", "[plot]")
{
	DumpContents d;
	for (int i = 0; i < 4; ++i) {
		SharedSnapshot s;
		s.snapshot.mono_ns = kT0 + static_cast<std::uint64_t>(i) * kSecond / 2;
		s.snapshot.add_counter("pmu.cycles", "system", 1000.0 * i * i, "perf");
		s.snapshot.add_counter("pmu.instructions", "system", 500.0 * i * i, "perf");
		// 6250 i (i + 1) us: 2.5 i % of the 0.5 s interval ending at i.
		s.snapshot.add_counter("psi.cpu_some_total_us", "system", 6250.0 * i * (i + 1), "procfs");
		s.snapshot.add_counter("pmu.cycles", "cpu:0", 1000.0 * i * i, "perf");
		s.snapshot.add_counter("pmu.instructions", "cpu:0", 500.0 * i * i, "perf");
		s.claimed_ids = {"cpu.ipc", "psi.cpu_some_pct"};
		d.snapshots.push_back(std::move(s));
	}
	const auto iv = plot_intervals(d);
	REQUIRE(iv.size() == 3);
	CHECK(iv[1].start_mono_ns == kT0 + kSecond / 2);
	CHECK(iv[1].end_mono_ns == kT0 + kSecond);
	CHECK(trigger_time_ns(d) == kT0 + 3 * kSecond / 2); // no triggered line (version 1)
	d.triggered_mono_ns = kT0 + kSecond;
	CHECK(trigger_time_ns(d) == kT0 + kSecond);
	d.triggered_mono_ns.reset();
	for (const auto &m : iv[1].iv.metrics) // never plotted, so not kept
		CHECK(m.scope != "cpu:0");
	auto req = request(trigger_time_ns(d));
	const Plot p = build_plot(iv, req);
	REQUIRE(panel_ids(p) == std::vector<std::string>{"cpu.ipc", "psi.cpu_some_pct"});
	const auto &psi = p.panels[1].series.at(0).runs.at(0);
	REQUIRE(psi.size() == 3);
	CHECK(psi[2].t_s == Approx(0));
	CHECK(psi[0].t_s == Approx(-1));
	CHECK(psi[2].value == Approx(7.5));
	CHECK(p.panels[0].series.at(0).runs.at(0)[1].value == Approx(0.5));
}
