#include "dump.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <ctime>

#include "hwsig/catalog.h"
#include "hwsig/cpu_identity.h"
#include "hwsig/dump_file.h"
#include "hwsig/error.h"

namespace hwsigd {

namespace {

std::uint64_t realtime_now_ns()
{
	struct timespec ts;
	::clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

const char *vendor_name(hwsig::CpuVendor v)
{
	switch (v) {
	case hwsig::CpuVendor::Intel:
		return "intel";
	case hwsig::CpuVendor::Amd:
		return "amd";
	case hwsig::CpuVendor::Unknown:
		break;
	}
	return "unknown";
}

// What a reader needs to interpret the numbers on another machine later.
std::vector<std::pair<std::string, std::string>> host_facts(const Config &cfg)
{
	std::vector<std::pair<std::string, std::string>> f;
	struct utsname u;
	if (::uname(&u) == 0) {
		f.emplace_back("hostname", u.nodename);
		f.emplace_back("kernel", std::string(u.release) + " " + u.version);
		f.emplace_back("machine", u.machine);
	}
	auto cpu = hwsig::read_cpu_identity(cfg.root);
	f.emplace_back("cpu_vendor", vendor_name(cpu.vendor));
	f.emplace_back("cpu_family", std::to_string(cpu.family));
	f.emplace_back("cpu_model", std::to_string(cpu.model));
	f.emplace_back("hypervisor", cpu.hypervisor ? "yes" : "no");
	f.emplace_back("cpus_online", std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)));
	f.emplace_back("hwsig_version", HWSIG_VERSION);
	f.emplace_back("catalog_version", std::to_string(hwsig::kCatalogVersion));
	char num[32];
	std::snprintf(num, sizeof(num), "%g", cfg.interval);
	f.emplace_back("interval_s", num);
	f.emplace_back("per_cpu", cfg.per_cpu ? "yes" : "no");
	f.emplace_back("pmu", cfg.pmu);
	return f;
}

} // namespace

bool parse_seconds(std::string_view text, double &out)
{
	double v = 0;
	auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec != std::errc() || p != text.data() + text.size() || text.empty() || !std::isfinite(v) || v < 0)
		return false;
	out = v;
	return true;
}

std::string make_dump(const History &history, const Config &cfg, const std::vector<std::string> &claimed,
		      double seconds, const std::string &trigger)
{
	hwsig::DumpContents d;
	d.facts = host_facts(cfg);
	d.trigger = trigger;
	d.created_ns = realtime_now_ns();
	const std::size_t n = history.snapshots();
	if (n == 0)
		throw hwsig::Error("the history holds no snapshot yet");
	// The newest snapshot and those within `seconds` before it; one more
	// so that the first interval of the window can be derived.
	std::size_t first = 0;
	if (seconds > 0) {
		const std::uint64_t newest = history.mono_ns(n - 1);
		const auto span = static_cast<std::uint64_t>(seconds * 1e9);
		first = n - 1;
		while (first > 0 && newest - history.mono_ns(first) < span)
			--first;
	}
	hwsig::DumpWriter w;
	w.begin(d);
	for (std::size_t i = first; i < n; ++i)
		w.add(history.snapshot(i), history.vms(i), claimed);
	return w.finish();
}

} // namespace hwsigd
