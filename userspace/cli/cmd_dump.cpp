// hwsigctl dump: writes the flight recorder's file from hwsigd's history
// and the module's rings, or from the rings alone when no hwsigd answers
// (Documentation/dump-format.rst).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "commands.h"
#include "duration.h"
#include "hwsig/daemon_client.h"
#include "hwsig/docs.h"
#include "hwsig/dump_capture.h"
#include "hwsig/dump_file.h"
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "snapshot_feed.h"

namespace po = boost::program_options;

namespace {

const char *kExamples =
	"The file is one zstd frame: host facts (kernel, CPU, hwsig and catalog\n"
	"versions, the PMU event plan), every snapshot hwsigd kept with its BPF\n"
	"histograms and VM list, and the records in hwsig.ko's per-CPU rings with\n"
	"their loss counts (format: " HWSIG_DOC("dump-format.rst") ").\n"
	"When no hwsigd answers (not running, or killed with kill -9), the file\n"
	"holds the host facts and the rings alone, no snapshot history: the\n"
	"module keeps sampling without the daemon, so its last ticks are there.\n"
	"Without the module's rings either, there is nothing to dump: it fails.\n"
	"--last applies to hwsigd's history; the rings are dumped whole.\n\n"
	"examples:\n"
	"  hwsigctl dump                         all the daemon keeps (15 min by default)\n"
	"  hwsigctl dump --last 2m -o stall.hwsd the last two minutes, to stall.hwsd\n"
	"  hwsigctl replay stall.hwsd            then read it, as 'stat' would show it\n"
	"  hwsigctl replay stall.hwsd --ticks    the rings' records, tick by tick\n";

std::uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	::clock_gettime(clock, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Without hwsigd: the host facts, the PMU plan and the module's rings.
// Throws hwsig::Error when the rings are not there (nothing to dump).
std::string rings_only_dump(std::string &what)
{
	hwsig::DumpContents d;
	d.facts = hwsig::host_facts("/");
	d.facts.emplace_back("source", "rings only (no hwsigd)");
	d.trigger = "request";
	d.created_ns = clock_ns(CLOCK_REALTIME);
	// The moment of the request, on the records' clock.
	d.triggered_mono_ns = clock_ns(CLOCK_MONOTONIC);
	d.pmu_plan = hwsig::pmu_plan_entries("/");
	hwsig::capture_rings("/", d);
	if (!d.rings)
		throw hwsig::Error(d.rings_absent);
	std::size_t records = 0;
	for (const auto &c : d.rings->cpus)
		records += c.records.size();
	what = "host facts and hwsig.ko's rings (" + std::to_string(records) + " records of " +
	       std::to_string(d.rings->cpus.size()) + " CPUs), no snapshot history";
	return hwsig::encode_dump(d);
}

std::string default_name()
{
	char host[64] = "host";
	::gethostname(host, sizeof(host) - 1);
	std::time_t now = std::time(nullptr);
	struct tm tm;
	::gmtime_r(&now, &tm);
	char when[32];
	std::strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	return std::string("hwsig-") + host + "-" + when + ".hwsd";
}

} // namespace

namespace hwsigctl {

int cmd_dump(const std::vector<std::string> &args)
{
	std::string last, out;
	po::options_description visible("hwsigctl dump [options]\n\n"
					"Writes what hwsigd keeps of the last minutes (every source's\n"
					"snapshots, the BPF histograms, the VM list) and the records in\n"
					"hwsig.ko's rings to one file; without hwsigd, the rings alone.\n\n"
					"options");
	visible.add_options()
		("help,h", "this help")
		("last,l", po::value<std::string>(&last), "only the last DURATION (90, 90s, 2m, 1h); default: all")
		("output,o", po::value<std::string>(&out), "the file (default hwsig-HOST-TIME.hwsd here)");
	po::options_description hidden;
	po::variables_map vars;
	if (auto done = parse_command_line({"dump", visible, hidden, kExamples}, args, vars))
		return *done;
	double seconds = 0;
	if (!last.empty()) {
		auto d = parse_duration(last);
		if (!d || *d <= 0)
			return usage_error("dump", "--last: '" + last + "' is not a duration (90, 90s, 2m, 1h)");
		if (*d > kMaxDurationSeconds)
			return usage_error("dump", "--last: '" + last +
							   "' is longer than any clock can count (at most 2562047h); "
							   "leave --last out for all of the history");
		seconds = *d;
	}
	if (out.empty())
		out = default_name();
	try {
		const std::string socket = daemon_socket_path();
		auto client = hwsig::DaemonClient::connect_if_running(socket);
		if (!client) {
			std::string what;
			std::string bytes;
			try {
				bytes = rings_only_dump(what);
			} catch (const hwsig::Error &e) {
				std::fprintf(stderr, "hwsigctl dump: nothing to dump: no hwsigd answers on %s, and %s\n",
					     socket.c_str(), e.what());
				return 1;
			}
			hwsig::write_file_atomically(out, bytes, 0640);
			std::fprintf(stderr, "hwsigctl dump: no hwsigd answers on %s: %s written from the rings alone: %s (%zu KiB)\n",
				     socket.c_str(), out.c_str(), what.c_str(), (bytes.size() + 1023) / 1024);
			return 0;
		}
		std::string bytes = client->dump(seconds);
		hwsig::write_file_atomically(out, bytes, 0640);
		std::fprintf(stderr,
			     "hwsigctl dump: %s written (%zu KiB): hwsigd's history, host facts and hwsig.ko's rings "
			     "when loaded ('hwsigctl replay %s --info' says what is in it)\n",
			     out.c_str(), (bytes.size() + 1023) / 1024, out.c_str());
		return 0;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "hwsigctl dump: %s\n", e.what());
		return 1;
	}
}

} // namespace hwsigctl
