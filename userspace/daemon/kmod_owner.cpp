#include "kmod_owner.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <unistd.h>

#include "hwsig/error.h"
#include "hwsig/kmod.h"
#include "log.h"

namespace hwsigd {
namespace {

std::string state_dir(const Config &cfg)
{
	if (cfg.socket != "none") {
		auto slash = cfg.socket.rfind('/');
		if (slash != std::string::npos && slash > 0)
			return cfg.socket.substr(0, slash);
	}
	return "/run/hwsig";
}

// True when pid is a live hwsigd (not a reused pid of something else).
bool live_hwsigd(int pid)
{
	if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
		return false;
	std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
	std::string name;
	std::getline(comm, name);
	return name == "hwsigd";
}

// running: the module is loaded and sampling. Loaded-ness in *loaded.
bool module_running(bool *loaded)
{
	try {
		hwsig::KmodClient client;
		*loaded = true;
		return client.get_info().running;
	} catch (const hwsig::Error &) {
		*loaded = false;
		return false;
	}
}

} // namespace

KmodOwnership::KmodOwnership(const Config &cfg)
	: record_(state_dir(cfg) + "/kmod.owner"), wanted_(cfg.pmu == "kmod" && cfg.root == "/")
{
	if (!wanted_)
		return;
	bool loaded = false;
	was_running_ = module_running(&loaded);
	uses_ = loaded;
	std::ifstream in(record_);
	int owner = 0;
	if (!(in >> owner))
		return;
	if (live_hwsigd(owner) && owner != getpid())
		return; // another daemon's: the local socket check refuses to start next
	unlink(record_.c_str());
	if (!was_running_)
		return;
	try {
		hwsig::KmodClient client;
		client.stop();
		was_running_ = false;
		log(Level::Info, "hwsig.ko: stopped the configuration of hwsigd %d, which did not exit; starting afresh",
		    owner);
	} catch (const hwsig::Error &e) {
		log(Level::Warning, "hwsig.ko: cannot stop the configuration hwsigd %d left: %s", owner, e.what());
	}
}

void KmodOwnership::after_attach()
{
	if (!wanted_)
		return;
	bool loaded = false;
	const bool running = module_running(&loaded);
	uses_ = loaded;
	if (!running || was_running_)
		return;
	std::ofstream out(record_, std::ios::trunc);
	out << getpid() << "\n";
	recorded_ = static_cast<bool>(out);
	if (!recorded_)
		log(Level::Warning, "hwsig.ko: cannot record ownership in %s", record_.c_str());
}

std::vector<hwsig::SelfMetric> KmodOwnership::self_metrics()
{
	if (!uses_)
		return {};
	try {
		if (!client_)
			client_ = std::make_unique<hwsig::KmodClient>();
		const hwsig::KmodStatus st = client_->get_status();
		auto counter = [](const char *name, const char *help, std::uint64_t v) {
			return hwsig::SelfMetric{name, help, true, {}, static_cast<double>(v)};
		};
		return {
			counter("hwsig_kmod_ticks_skipped_total",
				"hwsig.ko ticks that wrote no record (the previous sample had not run yet)",
				st.ticks_skipped),
			counter("hwsig_kmod_ticks_overrun_total", "hwsig.ko timer periods that passed without the timer firing",
				st.ticks_overrun),
			counter("hwsig_kmod_records_written_total", "Records hwsig.ko wrote into its per-CPU rings",
				st.records_written),
			counter("hwsig_kmod_records_overwritten_total",
				"Ring records overwritten by newer ones (harmless for the newest-record reader)",
				st.records_overwritten),
		};
	} catch (const hwsig::Error &e) {
		// Unloaded under us: the PMU source reports its own reason.
		client_.reset();
		return {};
	}
}

KmodOwnership::~KmodOwnership()
{
	if (recorded_)
		unlink(record_.c_str());
}

} // namespace hwsigd
