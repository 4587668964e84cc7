#include "recorder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <malloc.h>

#include "dump.h"
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "log.h"

namespace hwsigd {

namespace {

// A trigger's name in a file name: letters, digits and '-' only.
std::string file_word(const std::string &why)
{
	std::string w;
	for (char c : why)
		w += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
	return w.substr(0, 32);
}

std::string dump_name(const std::string &why)
{
	char host[64] = "host";
	::gethostname(host, sizeof(host) - 1);
	struct timespec ts;
	::clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	::gmtime_r(&ts.tv_sec, &tm);
	char when[48];
	std::strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	char ms[24];
	std::snprintf(ms, sizeof(ms), ".%03ldZ", ts.tv_nsec / 1'000'000);
	return std::string("hwsig-") + host + "-" + when + ms + "-" + file_word(why) + ".hwsd";
}

} // namespace

Recorder::~Recorder()
{
	wait();
}

void Recorder::wait()
{
	std::thread t;
	{
		std::lock_guard lock(mu_);
		t = std::move(worker_);
	}
	if (t.joinable())
		t.join();
}

void Recorder::skip(const std::string &why)
{
	std::lock_guard lock(mu_);
	counts_[why].skipped++;
}

void Recorder::trigger(History history, const std::string &why, std::optional<std::uint64_t> triggered_mono_ns)
{
	std::lock_guard lock(mu_);
	if (cfg_.dump_dir == "none") {
		counts_[why].skipped++;
		log(Level::Warning, "%s: no dump written: dump-dir is 'none'", why.c_str());
		return;
	}
	if (busy_) {
		counts_[why].skipped++;
		log(Level::Warning, "%s: a dump is still being written: this trigger is skipped", why.c_str());
		return;
	}
	if (worker_.joinable())
		worker_.join(); // the last one is done (busy_ is false): reap it
	busy_ = true;
	worker_ = std::thread(&Recorder::write, this, std::move(history), why, triggered_mono_ns);
}

void Recorder::write(History history, std::string why, std::optional<std::uint64_t> triggered_mono_ns)
{
	const std::string path = cfg_.dump_dir + "/" + dump_name(why);
	bool ok = false;
	try {
		std::error_code ec;
		std::filesystem::create_directories(cfg_.dump_dir, ec);
		if (ec)
			throw hwsig::Error("creating " + cfg_.dump_dir + ": " + ec.message());
		std::string bytes = make_dump(history, cfg_, claimed_, 0, why, triggered_mono_ns);
		history = History(0);
		hwsig::write_file_atomically(path, bytes, 0640);
		log(Level::Info, "%s: dump written to %s (%zu KiB)", why.c_str(), path.c_str(), (bytes.size() + 1023) / 1024);
		ok = true;
		retain();
	} catch (const std::exception &e) {
		log(Level::Error, "%s: dump failed, sampling goes on: %s", why.c_str(), e.what());
	}
	history = History(0);
	::malloc_trim(0); // the copy's pages go back: a dump leaves RSS where it was
	std::lock_guard lock(mu_);
	(ok ? counts_[why].written : counts_[why].failed)++;
	busy_ = false;
}

void Recorder::retain()
{
	namespace fs = std::filesystem;
	struct Kept {
		std::string path;
		std::uintmax_t bytes;
	};
	std::vector<Kept> dumps;
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(cfg_.dump_dir, ec)) {
		const std::string name = e.path().filename().string();
		if (name.rfind("hwsig-", 0) != 0 || name.size() < 5 || name.substr(name.size() - 5) != ".hwsd")
			continue;
		std::error_code size_ec;
		auto bytes = e.file_size(size_ec);
		if (!size_ec)
			dumps.push_back({e.path().string(), bytes});
	}
	// Names sort by time (UTC, fixed width after the host): oldest first.
	auto stamp = [](const std::string &p) {
		auto dash = p.find("-20");
		return dash == std::string::npos ? p : p.substr(dash);
	};
	std::sort(dumps.begin(), dumps.end(), [&](const Kept &a, const Kept &b) { return stamp(a.path) < stamp(b.path); });
	std::uintmax_t total = 0;
	for (const auto &d : dumps)
		total += d.bytes;
	const std::uintmax_t cap = static_cast<std::uintmax_t>(cfg_.dump_max_mb) << 20;
	std::size_t i = 0;
	while (i + 1 < dumps.size() && (dumps.size() - i > cfg_.dump_keep || total > cap)) {
		if (::unlink(dumps[i].path.c_str()) == 0)
			log(Level::Info, "dump retention: deleted %s", dumps[i].path.c_str());
		else
			log(Level::Warning, "dump retention: cannot delete %s: %s", dumps[i].path.c_str(), std::strerror(errno));
		total -= dumps[i].bytes;
		++i;
	}
}

std::vector<hwsig::SelfMetric> Recorder::self_metrics()
{
	std::lock_guard lock(mu_);
	// Grouped by name: one HELP/TYPE block each, whatever the triggers.
	std::vector<hwsig::SelfMetric> m;
	for (const auto &[why, c] : counts_)
		m.push_back({"hwsig_dumps_total", "Dumps written to dump-dir, by trigger", true, {{"trigger", why}}, c.written});
	for (const auto &[why, c] : counts_)
		m.push_back({"hwsig_dump_failures_total", "Dumps that could not be written (the log says why), by trigger",
			     true, {{"trigger", why}}, c.failed});
	for (const auto &[why, c] : counts_)
		m.push_back({"hwsig_dumps_skipped_total",
			     "Triggers that wrote no dump (one still being written, or dump-dir none), by trigger", true,
			     {{"trigger", why}}, c.skipped});
	return m;
}

} // namespace hwsigd
