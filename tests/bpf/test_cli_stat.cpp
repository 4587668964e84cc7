// hwsigctl stat against known I/O on a loop device: a disk the BPF program
// had not seen when the run started is in interval 1 and in the summary
// (issue 17), and the summary's count matches the reads done.
#include <catch2/catch.hpp>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "require_root.h"
#include "workloads.h"

#ifdef HWSIGCTL_PATH

using hwsig_test::require_root;

namespace {

struct Block {
	std::string title;
	double seconds = 0;
	std::map<std::string, double> values; // "id scope" -> value
	std::map<std::string, std::string> notes; // "id scope" -> its note, where it has one
	std::vector<std::string> unavailable; // the lines of its Unavailable section
};

// The seconds a summary's value covers: the run, or for a scope first seen
// mid-run what its note says ("... over its last 2.00 s").
double covered(const Block &b, const std::string &key)
{
	static const std::regex over(R"(over its last ([0-9.]+) s)");
	auto it = b.notes.find(key);
	std::smatch m;
	if (it != b.notes.end() && std::regex_search(it->second, m, over))
		return std::stod(m[1].str());
	return b.seconds;
}

struct StatRun {
	int status = -1;
	std::string out;
	std::vector<Block> blocks;
};

// A table value in human units back in the catalog's base unit (req/s,
// B/s, us): "1,230" -> 1230, "2.17 MiB/s" -> 2.17 * 2^20, "45.0 ms" ->
// 45000. Three significant digits: within 0.5% of the value derived.
double base_value(std::string number, const std::string &unit)
{
	number.erase(std::remove(number.begin(), number.end(), ','), number.end());
	double v = std::stod(number);
	static const std::map<std::string, double> scale = {
		{"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024},
		{"ns", 1e-3}, {"µs", 1}, {"ms", 1e3}, {"s", 1e6}};
	std::string prefix = unit;
	if (prefix.size() > 2 && prefix.compare(prefix.size() - 2, 2, "/s") == 0 && prefix != "req/s")
		prefix.erase(prefix.size() - 2);
	auto it = scale.find(prefix);
	return it == scale.end() ? v : v * it->second;
}

// after_first: called once interval 1 has been printed (its snapshots
// taken), while the run goes on.
StatRun stat(const std::string &args, const std::function<void()> &after_first = {})
{
	StatRun r;
	std::string cmd = "HWSIG_CHECK_INTERVALS=1 " + std::string(HWSIGCTL_PATH) + " stat --no-daemon " + args +
			  " 2>&1";
	FILE *p = popen(cmd.c_str(), "r");
	REQUIRE(p);
	char buf[4096];
	bool called = false;
	while (fgets(buf, sizeof buf, p)) {
		r.out += buf;
		// The blank line that ends a block: interval 1 is complete.
		if (after_first && !called && std::string(buf) == "\n") {
			called = true;
			after_first();
		}
	}
	r.status = pclose(p);
	static const std::regex head(R"(^hwsig stat  \S+ \S+  (.*) \(([0-9.]+) s\)$)");
	// "! id   value unit   scope": '!' marks a value past a verdict threshold.
	static const std::regex value(R"(^[! ] (\S+) +(-?[0-9][0-9.,e+-]*) (\S*) +(\S+)$)");
	std::istringstream in(r.out);
	std::string l, last_key, note;
	bool unavailable = false;
	while (std::getline(in, l)) {
		std::smatch m;
		// A note is on the lines after its value: "      (text", wrapped
		// with 7 spaces, ending in ")".
		if (!last_key.empty() && (l.rfind("      (", 0) == 0 || (!note.empty() && l.rfind("       ", 0) == 0))) {
			note += (note.empty() ? l.substr(7) : " " + l.substr(7));
			if (!note.empty() && note.back() == ')')
				r.blocks.back().notes[last_key] = note.substr(0, note.size() - 1);
			continue;
		}
		note.clear();
		last_key.clear();
		if (std::regex_match(l, m, head)) {
			r.blocks.push_back({m[1].str(), std::stod(m[2].str()), {}, {}, {}});
			unavailable = false;
		} else if (r.blocks.empty()) {
			continue;
		} else if (l == "Unavailable" || l == "Unavailable now") {
			unavailable = true;
		} else if (l.rfind("! ", 0) == 0 && !std::regex_match(l, m, value)) {
			unavailable = false; // a verdict line
		} else if (unavailable) {
			r.blocks.back().unavailable.push_back(l);
		} else if (std::regex_match(l, m, value)) {
			last_key = m[1].str() + " " + m[4].str();
			r.blocks.back().values[last_key] = base_value(m[2].str(), m[3].str());
		}
	}
	return r;
}

} // namespace

TEST_CASE("hwsigctl stat: reads on a disk idle until mid-run are in the summary, over the run", "[cli][block]")
{
	require_root();
	hwsig_test::LoopDevice loop(64ull << 20);
	const std::string dev = "dev:" + loop.name();
	constexpr std::size_t kReads = 1500;
	StatRun r;
	// Once interval 1 is printed: the collector is attached and the first
	// snapshots are taken, the run has three intervals to go.
	r = stat("-i 1 -c 4", [&] {
		hwsig_test::direct_reads(loop.path(), hwsig_test::random_offsets(kReads, 4096, loop.bytes(), 7), 4096);
	});
	INFO(r.out);
	CHECK(WEXITSTATUS(r.status) == 0);
	REQUIRE(r.blocks.size() == 5);
	const Block &sum = r.blocks.back();
	CHECK(sum.title == "summary of 4 intervals");
	REQUIRE(sum.values.count("io.iops_read " + dev));
	// The disk's first request came after the first snapshot, but the disk
	// was there, idle: its rate is over the whole run, without a note
	// (a counter at zero is not an absent one).
	const double seconds = covered(sum, "io.iops_read " + dev);
	CHECK(seconds == sum.seconds);
	CHECK(sum.notes.count("io.iops_read " + dev) == 0);
	const double reads = sum.values.at("io.iops_read " + dev) * seconds;
	CHECK(reads >= kReads * 0.99);
	CHECK(reads <= kReads * 1.01 + 5);
	REQUIRE(sum.values.count("io.read_bps " + dev));
	const double bytes = sum.values.at("io.read_bps " + dev) * covered(sum, "io.read_bps " + dev);
	CHECK(bytes >= 4096.0 * kReads * 0.99);
	CHECK(bytes <= 4096.0 * (kReads * 1.01 + 5));
	CHECK(sum.values.count("io.latency_p50_us " + dev));
	// The intervals add up to the same count.
	double by_interval = 0;
	for (std::size_t i = 0; i + 1 < r.blocks.size(); ++i)
		if (r.blocks[i].values.count("io.iops_read " + dev))
			by_interval += r.blocks[i].values.at("io.iops_read " + dev) * r.blocks[i].seconds;
	CHECK(by_interval >= kReads * 0.99);
	CHECK(by_interval <= kReads * 1.01 + 5);
	for (const auto &line : sum.unavailable)
		CHECK(line.find("in this interval") == std::string::npos);
}

TEST_CASE("hwsigctl stat: I/O running from the start is in interval 1", "[cli][block]")
{
	require_root();
	hwsig_test::LoopDevice loop(64ull << 20);
	const std::string dev = "dev:" + loop.name();
	std::atomic<bool> stop{false};
	std::thread io([&] {
		unsigned seed = 1;
		while (!stop)
			hwsig_test::direct_reads(loop.path(), hwsig_test::random_offsets(50, 4096, loop.bytes(), seed++),
						 4096);
	});
	StatRun r = stat("-i 1 -c 2");
	stop = true;
	io.join();
	INFO(r.out);
	CHECK(WEXITSTATUS(r.status) == 0);
	REQUIRE(r.blocks.size() == 3);
	for (const Block &b : r.blocks) {
		INFO(b.title);
		REQUIRE(b.values.count("io.iops_read " + dev));
		CHECK(b.values.at("io.iops_read " + dev) > 10);
		CHECK(b.values.count("io.iops_write " + dev));
		CHECK(b.values.at("io.iops_write " + dev) == 0);
	}
}

TEST_CASE("hwsigctl stat: a short-lived process that looks like QEMU is no vm:pid-N with zero values",
	  "[cli][sched]")
{
	require_root();
	// Unnamed (no -name): discovery calls it pid-N. It sleeps through
	// its short life: no run-queue event of its own after it is selected.
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		::prctl(PR_SET_NAME, "qemu-system-x86");
		::usleep(600 * 1000);
		::_exit(0);
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	StatRun r = stat("-i 1 -c 2");
	int status = 0;
	waitpid(child, &status, 0);
	INFO(r.out);
	CHECK(WEXITSTATUS(r.status) == 0);
	REQUIRE(r.blocks.size() == 3);
	const std::string scope = "vm:pid-" + std::to_string(child);
	for (const Block &b : r.blocks)
		for (const auto &[key, value] : b.values)
			CHECK(key.find(scope) == std::string::npos);
}

#endif
