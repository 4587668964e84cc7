// hwsigctl dump: writes the flight recorder's file from hwsigd's history
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
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "snapshot_feed.h"

namespace po = boost::program_options;

namespace {

const char *kExamples =
	"The file is one zstd frame: host facts (kernel, CPU, hwsig and catalog\n"
	"versions), then every kept snapshot with its BPF histograms and VM list\n"
	"(format: Documentation/dump-format.rst). 'hwsigctl replay FILE' reads it.\n"
	"The daemon must run: a dump from the module's rings alone is not built yet.\n\n"
	"examples:\n"
	"  hwsigctl dump                         all the daemon keeps (15 min by default)\n"
	"  hwsigctl dump --last 2m -o stall.hwsd the last two minutes, to stall.hwsd\n"
	"  hwsigctl replay stall.hwsd            then read it, as 'stat' would show it\n";

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
					"snapshots, the BPF histograms, the VM list) to one file.\n\n"
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
		seconds = *d;
	}
	if (out.empty())
		out = default_name();
	try {
		const std::string socket = daemon_socket_path();
		auto client = hwsig::DaemonClient::connect_if_running(socket);
		if (!client) {
			std::fprintf(stderr,
				     "hwsigctl dump: no hwsigd answers on %s: the dump comes from its history "
				     "(start it: systemctl start hwsigd)\n",
				     socket.c_str());
			return 1;
		}
		std::string bytes = client->dump(seconds);
		hwsig::write_file_atomically(out, bytes, 0640);
		std::fprintf(stderr, "hwsigctl dump: %s written (%zu KiB)\n", out.c_str(), (bytes.size() + 1023) / 1024);
		return 0;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "hwsigctl dump: %s\n", e.what());
		return 1;
	}
}

} // namespace hwsigctl
