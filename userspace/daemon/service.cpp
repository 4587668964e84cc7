#include "service.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <functional>
#include <malloc.h>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "dump.h"
#include "gzip.h"
#include "history.h"
#include "recorder.h"
#include "snapshot_recycler.h"
#include "http_server.h"
#include "kmod_owner.h"
#include "local_server.h"
#include "log.h"
#include "cannot_measure_log.h"
#include "note_log.h"
#include "hwsig/derive.h"
#include "hwsig/dump_rule.h"
#include "hwsig/render.h"
#include "hwsig/render_stat.h"
#include "hwsig/render_prometheus.h"
#include "hwsig/sampler.h"
#include "hwsig/snapshot_wire.h"

namespace hwsigd {
namespace {

std::uint64_t mono_now()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

constexpr std::uint64_t kMinFreshNs = 10'000'000; // hwsigctl stat's shortest interval

std::uint64_t to_ns(double s)
{
	return static_cast<std::uint64_t>(std::llround(s * 1e9));
}

hwsig::SourceOptions source_options(const Config &cfg)
{
	hwsig::SourceOptions o;
	o.root = cfg.root;
	o.pmu = cfg.pmu != "off";
	o.kmod = cfg.pmu == "kmod";
	o.bpf = !cfg.bpf.empty();
	auto has = [&](const char *set) {
		for (const auto &s : cfg.bpf)
			if (s == set)
				return true;
		return false;
	};
	o.bpf_sched = has("sched");
	o.bpf_block = has("block");
	o.bpf_vhost = has("vhost");
	o.pmu_off_reason = "hardware counters disabled (hwsigd: pmu = off)";
	o.bpf_off_reason = "BPF collector set disabled (hwsigd: bpf = ...)";
	o.resctrl = cfg.resctrl;
	o.resctrl_off_reason = std::string(hwsig::kResctrlOffPrefix) +
			       " (opt-in: hwsigd's resctrl = true; it makes a monitoring group per VM)";
	return o;
}

// The loop's own figures at one snapshot: plain numbers, turned into
// SelfMetric rows only when a scrape renders them (every 15-60 s), not
// at every snapshot.
struct LoopFigures {
	std::vector<hwsig::Sampler::SourceTiming> timings; // source names are static
	double snapshot_s = 0, lateness_s = 0, lateness_max_s = 0, interval_s = 0;
	std::uint64_t snapshots = 0, skipped = 0, history_intervals = 0;
};

void add_loop_metrics(const LoopFigures &f, std::vector<hwsig::SelfMetric> &out)
{
	for (const auto &t : f.timings)
		out.push_back({"hwsig_collect_duration_seconds", "Time each source took in the last snapshot", false,
			       {{"source", std::string(t.source)}}, t.seconds});
	out.push_back({"hwsig_snapshot_duration_seconds", "Time the last snapshot took, every source together", false,
		       {}, f.snapshot_s});
	out.push_back({"hwsig_snapshots_total", "Snapshots taken on schedule since start", true, {},
		       static_cast<double>(f.snapshots)});
	out.push_back({"hwsig_snapshots_skipped_total",
		       "Scheduled snapshots skipped because the previous one ran past them", true, {},
		       static_cast<double>(f.skipped)});
	out.push_back({"hwsig_snapshot_lateness_seconds", "How late the last snapshot started against its schedule",
		       false, {}, f.lateness_s});
	out.push_back({"hwsig_snapshot_lateness_max_seconds", "The latest any snapshot started since hwsigd started",
		       false, {}, f.lateness_max_s});
	out.push_back({"hwsig_history_intervals", "Intervals kept in memory", false, {},
		       static_cast<double>(f.history_intervals)});
	out.push_back({"hwsig_interval_seconds", "Configured interval between snapshots", false, {}, f.interval_s});
}

hwsig::ExportSwitches export_switches(const Config &c)
{
	hwsig::ExportSwitches sw;
	sw.per_cpu = c.per_cpu;
	sw.per_vcpu = c.per_vcpu;
	sw.vm_detail = c.vm_detail;
	sw.per_queue = c.per_queue;
	sw.culprit_top = c.culprit_top;
	sw.culprit_matrix = c.culprit_matrix;
	sw.full_text_buckets = c.text_buckets == "full";
	return sw;
}

// What /metrics renders: the latest snapshot and what came with it.
struct Published {
	std::uint64_t seq = 0;
	std::shared_ptr<const hwsig::Snapshot> snapshot; // also the loop's previous one
	// The notes of what cannot be measured come from derive() of the
	// interval prev -> snapshot: derived by the first scrape that renders
	// this state (scrapes come every 15-60 s, snapshots every second).
	std::shared_ptr<const hwsig::Snapshot> prev;
	std::shared_ptr<const std::vector<std::string>> claimed;
	std::shared_ptr<const std::vector<hwsig::Vm>> vms; // the history's: shared while they stay the same
	LoopFigures loop;
	hwsig::ExportSwitches switches;
};

// Renders each published state at most once per format, whatever the
// number of scrapers: a scrape costs a copy of the cached text.
class Exposition {
public:
	explicit Exposition(NoteLog &notes) : notes_(notes) {}
	// Self metrics of other parts (hwsig.ko's counters, the recorder's),
	// read when a scrape renders: hwsig.ko's take a netlink round trip.
	void set_more_self(std::function<void(std::vector<hwsig::SelfMetric> &)> more) { more_self_ = std::move(more); }
	void publish(std::shared_ptr<const Published> p)
	{
		std::lock_guard lock(mu_);
		latest_ = std::move(p);
	}
	// The gzipped body is cached beside the plain one: compressed once per
	// snapshot and format too, whatever the number of scrapers.
	HttpReply metrics(std::string_view accept, bool gzip_ok)
	{
		const auto fmt = hwsig::negotiate_format(accept);
		std::lock_guard lock(mu_);
		if (!latest_)
			return {503, "text/plain; charset=utf-8", "hwsigd: no snapshot yet\n"};
		Cached &plain = cache_[static_cast<int>(fmt)][0];
		if (plain.seq != latest_->seq || plain.body.empty()) {
			const std::uint64_t start = mono_now();
			if (unavailable_seq_ != latest_->seq) {
				unavailable_ = hwsig::derive(*latest_->prev, *latest_->snapshot, *latest_->claimed).unavailable;
				unavailable_seq_ = latest_->seq;
				notes_.seen(unavailable_); // their words, which /metrics leaves out
			}
			hwsig::ExportInput in;
			in.snapshot = latest_->snapshot.get();
			in.unavailable = &unavailable_;
			in.vms = latest_->vms.get();
			in.switches = latest_->switches;
			in.culprit_picks = &culprit_picks_;
			in.version = HWSIG_VERSION;
			add_loop_metrics(latest_->loop, in.self);
			if (more_self_)
				more_self_(in.self);
			in.self.push_back({"hwsig_scrape_duration_seconds",
					   "Time the last rendering of this exposition took (scrapes between two "
					   "snapshots are served from it)",
					   false, {}, last_render_s_});
			plain.body = hwsig::render_prometheus(in, fmt);
			plain.seq = latest_->seq;
			last_render_s_ = static_cast<double>(mono_now() - start) * 1e-9;
		}
		HttpReply reply{200, std::string(hwsig::content_type(fmt)), {}, gzip_ok, "Accept, Accept-Encoding"};
		if (!gzip_ok) {
			reply.body = plain.body;
			return reply;
		}
		Cached &packed = cache_[static_cast<int>(fmt)][1];
		if (packed.seq != plain.seq || packed.body.empty()) {
			packed.body = gzip(plain.body);
			packed.seq = plain.seq;
		}
		reply.body = packed.body;
		return reply;
	}

private:
	struct Cached {
		std::uint64_t seq = 0;
		std::string body;
	};
	std::mutex mu_;
	NoteLog &notes_;
	std::shared_ptr<const Published> latest_;
	std::function<void(std::vector<hwsig::SelfMetric> &)> more_self_;
	Cached cache_[hwsig::kExpositionFormats][2]; // per format: plain, gzipped
	hwsig::CulpritPicks culprit_picks_;
	std::uint64_t unavailable_seq_ = 0; // the state unavailable_ was derived for
	std::vector<hwsig::UnavailableNote> unavailable_;
	double last_render_s_ = 0;
};

HttpReply route(Exposition &exp, const HttpRequest &req)
{
	const std::string_view path = req.path;
	if (path == "/metrics")
		return exp.metrics(req.accept, req.gzip_ok);
	if (path == "/")
		return {200, "text/html; charset=utf-8",
			"<html><head><title>hwsigd</title></head><body><h1>hwsigd</h1>"
			"<p><a href=\"/metrics\">/metrics</a></p></body></html>\n"};
	return {404, "text/plain; charset=utf-8", "not found: hwsigd serves /metrics\n"};
}

class Service {
public:
	explicit Service(const Config &cfg) : cfg_(cfg), history_(cfg.history), interval_s_(cfg.interval) {}
	// The servers go first: a request in flight reads the parts below
	// (the exposition's self metrics read kmod_ and recorder_).
	~Service()
	{
		http_.reset();
		local_.reset();
	}
	int run();

private:
	bool start();
	void tick(std::uint64_t deadline);
	void publish(std::shared_ptr<const hwsig::Snapshot> prev, std::shared_ptr<const hwsig::Snapshot> cur,
		     std::shared_ptr<const std::vector<hwsig::Vm>> vms);
	void reload();
	std::string answer_local(const std::string &request);
	// fired_mono_ns: the snapshot that ends iv (a dump's 'triggered').
	void check_rules(const hwsig::Interval &iv, std::uint64_t fired_mono_ns);
	void watchdog(std::uint64_t now);

	Config cfg_;
	std::mutex history_mu_; // the loop adds, the local socket reads
	History history_;
	std::mutex sampler_mu_; // the loop and the local socket both take snapshots
	std::unique_ptr<hwsig::Sampler> sampler_;
	std::vector<std::string> claimed_;
	std::shared_ptr<const std::vector<std::string>> claimed_shared_; // the same, for Published
	std::unique_ptr<Recorder> recorder_;
	std::vector<hwsig::DumpRule> rules_; // dump-rule; the loop derives each interval only when there are some
	std::uint64_t last_rule_dump_ns_ = 0;
	std::shared_ptr<const hwsig::Snapshot> prev_;
	// Where dropped snapshots go to be filled again. Their deleters share
	// it, so it outlives every snapshot whatever the members' order.
	std::shared_ptr<SnapshotRecycler> recycler_ = SnapshotRecycler::make();
	// On-demand snapshots for the local socket, at most one per
	// kMinFreshNs: a reader asking in a loop gets the same answer
	// instead of making the daemon burn a CPU.
	std::uint64_t fresh_at_ns_ = 0;
	std::string fresh_text_;
	NoteLog note_log_;
	CannotMeasureLog cannot_measure_; // the sampling thread's
	Exposition exposition_{note_log_};
	std::unique_ptr<HttpServer> http_;
	std::unique_ptr<LocalServer> local_;
	std::unique_ptr<KmodOwnership> kmod_;
	std::uint64_t seq_ = 0, snapshots_ = 0, skipped_ = 0;
	double lateness_s_ = 0, lateness_max_s_ = 0, snapshot_s_ = 0;
	std::uint64_t watchdog_ns_ = 0, last_ping_ns_ = 0;
	// cfg_ belongs to the loop; what the socket thread reports of it:
	std::atomic<double> interval_s_{0};
};

bool Service::start()
{
	try {
		kmod_ = std::make_unique<KmodOwnership>(cfg_);
		sampler_ = std::make_unique<hwsig::Sampler>(hwsig::default_sources(source_options(cfg_)), cfg_.root);
		claimed_ = sampler_->claimed_ids();
		claimed_shared_ = std::make_shared<const std::vector<std::string>>(claimed_);
		recorder_ = std::make_unique<Recorder>(cfg_, claimed_);
		exposition_.set_more_self([this](std::vector<hwsig::SelfMetric> &out) {
			for (auto &m : kmod_->self_metrics())
				out.push_back(std::move(m));
			for (auto &m : recorder_->self_metrics())
				out.push_back(std::move(m));
		});
		if (!(cfg_.dump_rules.size() == 1 && cfg_.dump_rules[0] == "none"))
			for (const auto &text : cfg_.dump_rules)
				rules_.push_back(hwsig::DumpRule::parse(text)); // checked by the configuration
		// Bind first: an address in use or a live daemon on the socket
		// ends the start before anything is loaded into the kernel.
		if (cfg_.listen != "none")
			http_ = std::make_unique<HttpServer>(cfg_.listen, [this](const HttpRequest &req) {
				return route(exposition_, req);
			});
		if (cfg_.socket != "none")
			local_ = std::make_unique<LocalServer>(cfg_.socket, cfg_.socket_group,
							       [this](const std::string &r) { return answer_local(r); });
		// Collectors attach on their first collect: READY comes after it.
		std::vector<hwsig::Vm> vms;
		{
			std::lock_guard lock(sampler_mu_);
			prev_ = recycler_->share(sampler_->take());
			vms = sampler_->vms();
		}
		{
			std::lock_guard lock(history_mu_);
			history_.add(*prev_, vms, cfg_.per_cpu);
		}
		kmod_->after_attach();
	} catch (const std::exception &e) {
		log(Level::Error, "%s", e.what());
		return false;
	}
	return true;
}

std::string Service::answer_local(const std::string &request)
{
	if (request == "snapshot") {
		std::lock_guard lock(sampler_mu_);
		const std::uint64_t now = mono_now();
		if (fresh_text_.empty() || now - fresh_at_ns_ >= kMinFreshNs) {
			hwsig::Snapshot s = sampler_->take();
			fresh_text_ = hwsig::encode_snapshot(s, sampler_->vms(), claimed_);
			fresh_at_ns_ = now;
		}
		return fresh_text_;
	}
	if (request == "dump" || request.rfind("dump ", 0) == 0) {
		double seconds = 0;
		if (request.size() > 5 && !parse_seconds(request.substr(5), seconds))
			return "error\tdump: '" + request.substr(5, 32) + "' is not a number of seconds\n";
		History copy(0);
		{
			std::lock_guard lock(history_mu_);
			copy = history_;
		}
		std::string answer;
		try {
			answer = make_dump(copy, cfg_, claimed_, seconds, "request");
		} catch (const std::exception &e) {
			answer = std::string("error\tdump: ") + e.what() + "\n";
		}
		// The copy and the rebuilt snapshots are freed: give the pages
		// back, so that a dump does not leave the daemon's RSS higher.
		copy = History(0);
		::malloc_trim(0);
		return answer;
	}
	if (request == "history") {
		// Derived from a copy: the loop keeps adding meanwhile.
		History copy(0);
		{
			std::lock_guard lock(history_mu_);
			copy = history_;
		}
		return encode_history(copy, claimed_, cfg_.per_cpu);
	}
	if (request == "status") {
		char buf[128];
		std::snprintf(buf, sizeof(buf), "hwsigd\t%s\t%d\t%d\t%g\n", HWSIG_VERSION, getpid(),
			      kmod_ && kmod_->uses_module() ? 1 : 0, interval_s_.load());
		return buf;
	}
	return "error\tunknown request '" + request.substr(0, 32) + "' (snapshot, history, dump [SECONDS], status)\n";
}

void Service::publish(std::shared_ptr<const hwsig::Snapshot> prev, std::shared_ptr<const hwsig::Snapshot> cur,
		      std::shared_ptr<const std::vector<hwsig::Vm>> vms)
{
	auto p = std::make_shared<Published>();
	p->seq = ++seq_;
	p->snapshot = std::move(cur);
	p->prev = std::move(prev);
	p->claimed = claimed_shared_;
	p->switches = export_switches(cfg_);
	p->vms = std::move(vms);
	LoopFigures &f = p->loop;
	{
		std::lock_guard lock(sampler_mu_);
		f.timings = sampler_->last_timings();
	}
	f.snapshot_s = snapshot_s_;
	f.snapshots = snapshots_;
	f.skipped = skipped_;
	f.lateness_s = lateness_s_;
	f.lateness_max_s = lateness_max_s_;
	{
		std::lock_guard lock(history_mu_);
		f.history_intervals = history_.size();
	}
	f.interval_s = cfg_.interval;
	exposition_.publish(std::move(p));
}

void Service::check_rules(const hwsig::Interval &iv, std::uint64_t fired_mono_ns)
{
	for (auto &rule : rules_) {
		if (!rule.observe(iv))
			continue;
		const std::uint64_t now = mono_now();
		const auto gap = static_cast<std::uint64_t>(cfg_.dump_gap * 1e9);
		if (last_rule_dump_ns_ && now - last_rule_dump_ns_ < gap) {
			log(Level::Info, "dump rule '%s' fired: no dump, the last one was under dump-gap (%g s) ago",
			    rule.text().c_str(), cfg_.dump_gap);
			recorder_->skip("rule");
			continue;
		}
		log(Level::Warning, "dump rule '%s' fired: writing a dump", rule.text().c_str());
		last_rule_dump_ns_ = now;
		History copy(0);
		{
			std::lock_guard lock(history_mu_);
			copy = history_;
		}
		recorder_->trigger(std::move(copy), "rule", fired_mono_ns);
	}
}

void Service::tick(std::uint64_t deadline)
{
	const std::uint64_t start = mono_now();
	lateness_s_ = start > deadline ? static_cast<double>(start - deadline) * 1e-9 : 0;
	lateness_max_s_ = std::max(lateness_max_s_, lateness_s_);
	std::shared_ptr<const hwsig::Snapshot> cur;
	std::shared_ptr<const std::vector<hwsig::Vm>> vms;
	{
		std::lock_guard lock(sampler_mu_);
		cur = recycler_->share(sampler_->take(recycler_->spare()));
		std::lock_guard hlock(history_mu_);
		history_.add(*cur, sampler_->vms(), cfg_.per_cpu);
		vms = history_.latest_vms();
	}
	snapshot_s_ = static_cast<double>(mono_now() - start) * 1e-9;
	++snapshots_;
	cannot_measure_.seen(cur->unavailable());
	if (cfg_.print_intervals || !rules_.empty()) {
		const hwsig::Interval iv = hwsig::derive(*prev_, *cur, claimed_);
		note_log_.seen(iv.unavailable);
		if (cfg_.print_intervals) {
			hwsig::RenderOptions o;
			std::fputs(hwsig::render_stat_interval(iv, o, hwsig::Thresholds{}, hwsig::StatForm::Json).c_str(),
				   stdout);
			std::fflush(stdout);
		}
		check_rules(iv, cur->mono_ns);
	}
	auto prev = std::move(prev_);
	prev_ = cur;
	publish(std::move(prev), std::move(cur), std::move(vms));
}

void Service::reload()
{
	sd_notify(0, "RELOADING=1");
	Config fresh;
	std::string err = reload_config(cfg_, fresh);
	if (!err.empty()) {
		log(Level::Error, "SIGHUP: keeping the running configuration: %s", err.c_str());
	} else {
		// What the loop can change in place; the rest needs a restart
		// (collectors, sockets): say so instead of half-applying it.
		auto later = [&](const char *key, bool changed) {
			if (changed)
				log(Level::Warning, "SIGHUP: '%s' changed: it takes effect when hwsigd restarts", key);
		};
		later("listen", fresh.listen != cfg_.listen);
		later("socket", fresh.socket != cfg_.socket);
		later("socket-group", fresh.socket_group != cfg_.socket_group);
		later("pmu", fresh.pmu != cfg_.pmu);
		later("bpf", fresh.bpf != cfg_.bpf);
		later("resctrl", fresh.resctrl != cfg_.resctrl);
		later("dump-dir", fresh.dump_dir != cfg_.dump_dir);
		later("dump-keep", fresh.dump_keep != cfg_.dump_keep);
		later("dump-max-mb", fresh.dump_max_mb != cfg_.dump_max_mb);
		later("dump-rule", fresh.dump_rules != cfg_.dump_rules);
		later("dump-gap", fresh.dump_gap != cfg_.dump_gap);
		cfg_.interval = fresh.interval;
		interval_s_ = cfg_.interval;
		cfg_.per_cpu = fresh.per_cpu;
		cfg_.per_vcpu = fresh.per_vcpu;
		cfg_.vm_detail = fresh.vm_detail;
		cfg_.per_queue = fresh.per_queue;
		cfg_.culprit_top = fresh.culprit_top;
		cfg_.culprit_matrix = fresh.culprit_matrix;
		cfg_.text_buckets = fresh.text_buckets;
		cfg_.history = fresh.history;
		cfg_.log_level = fresh.log_level;
		{
			std::lock_guard lock(history_mu_);
			history_.set_capacity(cfg_.history);
		}
		set_log_level(cfg_.log_level);
		log(Level::Info, "SIGHUP: configuration re-read (interval %g s, per-cpu %s, history %u)", cfg_.interval,
		    cfg_.per_cpu ? "true" : "false", cfg_.history);
	}
	sd_notify(0, "READY=1");
}

void Service::watchdog(std::uint64_t now)
{
	if (watchdog_ns_ && now - last_ping_ns_ >= watchdog_ns_ / 4) {
		sd_notify(0, "WATCHDOG=1");
		last_ping_ns_ = now;
	}
}

int Service::run()
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	// Blocked before any thread starts, so every thread inherits it and
	// the signals queue on the signalfd instead.
	pthread_sigmask(SIG_BLOCK, &mask, nullptr);
	signal(SIGPIPE, SIG_IGN);
	hwsig::Fd sigfd(signalfd(-1, &mask, SFD_CLOEXEC));
	if (!sigfd) {
		log(Level::Error, "signalfd: %s", std::strerror(errno));
		return 1;
	}
	if (!start())
		return 1;
	std::uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) > 0)
		watchdog_ns_ = usec * 1000;
	log(Level::Info, "hwsigd %s: sampling every %g s; /metrics on %s; local socket %s", HWSIG_VERSION, cfg_.interval,
	    cfg_.listen.c_str(), cfg_.socket.c_str());
	sd_notifyf(0, "READY=1\nSTATUS=sampling every %g s\nMAINPID=%d", cfg_.interval, getpid());

	std::uint64_t deadline = mono_now() + to_ns(cfg_.interval);
	for (;;) {
		std::uint64_t now = mono_now();
		watchdog(now);
		if (now >= deadline) {
			tick(deadline);
			// Ran past one or more slots: skip them, keep the phase.
			const std::uint64_t step = to_ns(cfg_.interval);
			deadline += step;
			now = mono_now();
			if (now >= deadline) {
				std::uint64_t missed = (now - deadline) / step + 1;
				skipped_ += missed;
				deadline += missed * step;
			}
			continue;
		}
		std::uint64_t wake = deadline;
		if (watchdog_ns_)
			wake = std::min(wake, last_ping_ns_ + watchdog_ns_ / 4);
		const std::uint64_t wait = wake > now ? wake - now : 0;
		timespec ts{static_cast<time_t>(wait / 1000000000ull), static_cast<long>(wait % 1000000000ull)};
		pollfd p{sigfd.get(), POLLIN, 0};
		int rc = ppoll(&p, 1, &ts, nullptr);
		if (rc <= 0)
			continue;
		signalfd_siginfo si;
		if (read(sigfd.get(), &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGUSR1) {
			History copy(0);
			{
				std::lock_guard lock(history_mu_);
				copy = history_;
			}
			recorder_->trigger(std::move(copy), "SIGUSR1");
			continue;
		}
		if (si.ssi_signo == SIGHUP) {
			reload();
			deadline = mono_now() + to_ns(cfg_.interval);
			continue;
		}
		log(Level::Info, "%s: stopping", strsignal(static_cast<int>(si.ssi_signo)));
		break;
	}
	sd_notify(0, "STOPPING=1");
	// Readers first (they use the sampler), then the collectors; a dump
	// being written is finished (it holds its own copy).
	http_.reset();
	local_.reset();
	recorder_.reset();
	sampler_.reset();
	kmod_.reset();
	log(Level::Info, "stopped: every collector detached");
	return 0;
}

} // namespace

// systemd starts services with a soft fd limit of 1024 (for select()'s
// sake) under a far higher hard one. hwsigd never select()s (libmicrohttpd
// picks epoll) and keeps an fd open per vCPU thread's schedstat, per perf
// event and per BPF object: thousands on a host of 512 CPUs and 200 VMs,
// and a file kept open is read in one syscall instead of four.
static void raise_fd_limit()
{
	constexpr rlim_t kWanted = 65536;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= kWanted || rl.rlim_cur >= rl.rlim_max)
		return;
	const rlim_t was = rl.rlim_cur;
	rl.rlim_cur = std::min(rl.rlim_max, kWanted);
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		log(Level::Debug, "fd limit stays %llu: setrlimit: %s", static_cast<unsigned long long>(was),
		    std::strerror(errno));
	else
		log(Level::Debug, "fd limit %llu -> %llu", static_cast<unsigned long long>(was),
		    static_cast<unsigned long long>(rl.rlim_cur));
}

int run_service(const Config &cfg)
{
	set_log_level(cfg.log_level);
	raise_fd_limit();
	Service s(cfg);
	return s.run();
}

} // namespace hwsigd
