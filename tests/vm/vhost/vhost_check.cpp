// vhost-check: the guest test of hwsig's BPF vhost collector against the
// ground-truth driver (vhost-driver, tests/vm/vhost/vhost_driver.c), in the
// QEMU guest of scripts/vm-test.
//
//   vhost-check            the test; last line "vmtest: PASS|FAIL vhost-collector[: why]"
//   vhost-check --bench    collector cost per vhost event next to empty
//                          programs on the same hooks ("vmbench: ... ratio"),
//                          for the set Auto picks, then for the kprobe set
//
// The driver prints what the worker will see (step lines); every count the
// collector reports between the snapshot after "ready" and the one after
// "done" must equal it exactly: depth slots, stalls, per VM, per queue.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "as_nobody.h"
#include "empty_vhost.skel.h"
#include "hwsig/source_bpf.h"
#include "hwsig/derive.h"
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/series.h"
#include "skeleton.h"
#include "vhost_collector.h"
#include "hwsig/vhost.h"
#include "hwsig/vm_discovery.h"

namespace {

using hwsig::Histogram;
using hwsig::Snapshot;

constexpr std::size_t kSlots = 74; // HWSIG_VHOST_SLOTS
const char *kCase = "vhost-collector";
std::vector<std::string> failures;

void info(const std::string &s)
{
	std::printf("    %s\n", s.c_str());
	std::fflush(stdout);
}

void check(bool ok, const std::string &what)
{
	if (!ok) {
		failures.push_back(what);
		info("FAILED: " + what);
	}
}

std::uint64_t mono_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Runs a shell command; its output and exit status.
std::pair<int, std::string> shell(const std::string &cmd)
{
	std::string out;
	FILE *p = popen((cmd + " 2>&1").c_str(), "r");
	if (!p)
		return {-1, "popen failed"};
	char buf[4096];
	std::size_t n;
	while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
		out.append(buf, n);
	int st = pclose(p);
	return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), out};
}

bool module_loaded(const std::string &m)
{
	return hwsig::path_exists("/sys/module/" + m);
}

void insmod_all()
{
	for (const char *m : {"vhost_iotlb", "vhost", "tap", "tun", "vhost_net"}) {
		if (module_loaded(m))
			continue;
		auto [rc, out] = shell(std::string("insmod /lib/modules/") + m + ".ko");
		if (rc != 0)
			throw std::runtime_error(std::string("insmod ") + m + ".ko: " + out);
	}
	for (int i = 0; i < 100 && !hwsig::path_exists("/dev/vhost-net"); ++i)
		usleep(50000);
	if (!hwsig::path_exists("/dev/vhost-net"))
		throw std::runtime_error("/dev/vhost-net did not appear");
}

// ---- the driver ----

struct Expect {
	std::vector<std::uint64_t> tx = std::vector<std::uint64_t>(kSlots, 0);
	std::vector<std::uint64_t> rx = std::vector<std::uint64_t>(kSlots, 0);
	std::uint64_t stalls = 0;
};

std::map<std::string, unsigned long> fields(const std::string &line)
{
	std::map<std::string, unsigned long> f;
	std::istringstream in(line);
	std::string word;
	while (in >> word) {
		auto eq = word.find('=');
		if (eq != std::string::npos)
			f[word.substr(0, eq)] = std::strtoul(word.c_str() + eq + 1, nullptr, 10);
	}
	return f;
}

class Driver {
public:
	Driver(const std::string &name, const std::vector<std::string> &args) : name_(name)
	{
		int in[2], out[2];
		if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
			throw std::runtime_error("pipe: " + std::string(std::strerror(errno)));
		pid_ = fork();
		if (pid_ < 0)
			throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
		if (pid_ == 0) {
			dup2(in[0], 0);
			dup2(out[1], 1);
			// Its errors go to a file, shown when something fails.
			int err = open(err_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (err >= 0)
				dup2(err, 2);
			std::vector<std::string> argv = {"vhost-driver", "-name", "guest=" + name};
			argv.insert(argv.end(), args.begin(), args.end());
			std::vector<char *> cargv;
			for (auto &a : argv)
				cargv.push_back(a.data());
			cargv.push_back(nullptr);
			execv("/bin/vhost-driver", cargv.data());
			_exit(127);
		}
		close(in[0]);
		close(out[1]);
		to_ = in[1];
		from_ = out[0];
		id_ = pid_;
	}
	Driver(const Driver &) = delete;
	Driver &operator=(const Driver &) = delete;
	~Driver()
	{
		if (pid_ > 0) {
			kill(pid_, SIGKILL);
			waitpid(pid_, nullptr, 0);
		}
		if (to_ >= 0)
			close(to_);
		if (from_ >= 0)
			close(from_);
	}

	// The next line of its stdout within seconds; nullopt on EOF/timeout.
	std::optional<std::string> line(double seconds)
	{
		std::uint64_t deadline = mono_ns() + static_cast<std::uint64_t>(seconds * 1e9);
		for (;;) {
			auto nl = buf_.find('\n');
			if (nl != std::string::npos) {
				std::string l = buf_.substr(0, nl);
				buf_.erase(0, nl + 1);
				lines_.push_back(l);
				return l;
			}
			std::uint64_t now = mono_ns();
			if (now >= deadline)
				return std::nullopt;
			struct pollfd p = {from_, POLLIN, 0};
			int r = poll(&p, 1, static_cast<int>((deadline - now) / 1000000 + 1));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return std::nullopt;
			char b[4096];
			ssize_t n = read(from_, b, sizeof b);
			if (n <= 0)
				return std::nullopt;
			buf_.append(b, static_cast<std::size_t>(n));
		}
	}

	void ready()
	{
		auto l = line(60);
		if (!l || l->rfind("ready ", 0) != 0)
			throw std::runtime_error(name_ + ": no 'ready' line (got '" + l.value_or("EOF") + "')" + exit_text());
		auto f = fields(*l);
		worker_ = static_cast<int>(f["worker"]);
		if (static_cast<pid_t>(f["pid"]) != pid_)
			throw std::runtime_error(name_ + ": ready line names pid " + std::to_string(f["pid"]));
	}
	void send(const std::string &s)
	{
		std::string l = s + "\n";
		if (write(to_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
			throw std::runtime_error(name_ + ": writing '" + s + "' failed");
	}
	// Reads step lines until "done"; the ground truth they state.
	Expect until_done(double seconds)
	{
		Expect e;
		std::uint64_t deadline = mono_ns() + static_cast<std::uint64_t>(seconds * 1e9);
		for (;;) {
			double left = static_cast<double>(deadline - std::min(deadline, mono_ns())) / 1e9;
			auto l = line(left);
			if (!l)
				throw std::runtime_error(name_ + ": no 'done' within " + std::to_string(seconds) + " s" +
							 exit_text());
			if (*l == "done")
				return e;
			auto f = fields(*l);
			if (l->rfind("step tx ", 0) == 0) {
				e.tx[hwsig::Histogram::linear_log2_slot(f["depth"])] += f["batches"];
				check(f["wakeups"] == f["batches"], name_ + ": " + *l + ": wakeups != batches");
			} else if (l->rfind("step rxstall ", 0) == 0) {
				e.rx[0] += f["depth0"];
				e.rx[1] += f["depth1"];
				e.stalls += f["stalls_expected"];
			} else if (l->rfind("step rxfill ", 0) == 0) {
				e.rx[hwsig::Histogram::linear_log2_slot(f["buffers"])] += 1;
				e.stalls += f["stalls_expected"];
			} else {
				throw std::runtime_error(name_ + ": unexpected line '" + *l + "'");
			}
		}
	}
	// "exit", then its exit status (0 expected).
	int finish()
	{
		send("exit");
		int st = 0;
		for (int i = 0; i < 300; ++i) {
			pid_t r = waitpid(pid_, &st, WNOHANG);
			if (r == pid_) {
				pid_ = -1;
				return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			}
			usleep(100000);
		}
		return -1;
	}

	pid_t pid() const { return id_; }
	std::string err_path() const { return "/tmp/" + name_ + ".err"; }
	// Its stderr so far, indented, if any.
	void show_stderr() const
	{
		hwsig::FileRead r = hwsig::read_file(err_path(), 64 << 10);
		if (!r.data || r.data->empty())
			return;
		std::istringstream in(*r.data);
		std::string l;
		while (std::getline(in, l))
			info(name_ + " stderr: " + l);
	}
	int worker() const { return worker_; }
	const std::string &name() const { return name_; }
	const std::vector<std::string> &lines() const { return lines_; }

private:
	std::string exit_text()
	{
		int st;
		if (pid_ > 0 && waitpid(pid_, &st, WNOHANG) == pid_) {
			pid_ = -1;
			std::string text = " (driver exited " +
					   std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
			hwsig::FileRead r = hwsig::read_file(err_path(), 64 << 10);
			if (r.data && !r.data->empty())
				text += ": " + r.data->substr(0, r.data->find('\n'));
			return text + ")";
		}
		return "";
	}

	std::string name_;
	pid_t pid_ = -1; // -1 once reaped
	pid_t id_ = -1;  // its pid, kept
	int to_ = -1, from_ = -1;
	int worker_ = 0;
	std::string buf_;
	std::vector<std::string> lines_;
};

// ---- snapshots through the real source ----

struct Taken {
	Snapshot snap;
	std::vector<hwsig::Vm> vms;
};

Taken take(hwsig::Source &source)
{
	Taken t;
	t.vms = hwsig::discover_vms("/");
	hwsig::SourceContext ctx;
	ctx.vms = &t.vms;
	t.snap.mono_ns = mono_ns();
	source.collect(ctx, t.snap);
	return t;
}

// series: kVhostDepth (TX queues and their sums) or kVhostRxBuffers (RX).
std::vector<std::uint64_t> hist_delta(const Taken &a, const Taken &b, const std::string &scope,
				      const char *series = hwsig::series::kVhostDepth)
{
	const Histogram *hb = b.snap.histogram(series, scope);
	if (!hb)
		return {};
	const Histogram *ha = a.snap.histogram(series, scope);
	Histogram zero;
	zero.layout = Histogram::Layout::LinearLog2;
	auto d = Histogram::delta(ha ? *ha : zero, *hb);
	if (!d)
		return {};
	d->counts.resize(kSlots, 0);
	return d->counts;
}

std::optional<double> counter_delta(const Taken &a, const Taken &b, const char *name, const std::string &scope)
{
	const auto *cb = b.snap.counter(name, scope);
	if (!cb)
		return std::nullopt;
	const auto *ca = a.snap.counter(name, scope);
	return cb->value - (ca ? ca->value : 0.0);
}

std::string slots_text(const std::vector<std::uint64_t> &v)
{
	std::string s;
	for (std::size_t i = 0; i < v.size(); ++i)
		if (v[i])
			s += (s.empty() ? "" : " ") + std::to_string(i) + ":" + std::to_string(v[i]);
	return s.empty() ? "(empty)" : s;
}

void check_hist(const std::string &what, const std::vector<std::uint64_t> &got,
		const std::vector<std::uint64_t> &want)
{
	bool ok = got == want;
	info(what + ": slot:count " + slots_text(got) + (ok ? "" : "  expected " + slots_text(want)));
	check(ok, what + " depth histogram differs from the driver's ground truth");
}

std::vector<std::uint64_t> plus(std::vector<std::uint64_t> a, const std::vector<std::uint64_t> &b)
{
	for (std::size_t i = 0; i < a.size(); ++i)
		a[i] += b[i];
	return a;
}

// Nearest rank over the expected slots (exact when every value < 64).
std::optional<double> expected_percentile(const std::vector<std::uint64_t> &slots, double q)
{
	Histogram h;
	h.layout = Histogram::Layout::LinearLog2;
	h.counts = slots;
	return hwsig::percentile(h, q);
}

const hwsig::Metric *metric(const hwsig::Interval &iv, const std::string &id, const std::string &scope)
{
	for (const auto &m : iv.metrics)
		if (m.id == id && m.scope == scope)
			return &m;
	return nullptr;
}

void check_metric(const hwsig::Interval &iv, const std::string &id, const std::string &scope,
		  std::optional<double> want, double tolerance = 0)
{
	const hwsig::Metric *m = metric(iv, id, scope);
	std::string got = m ? std::to_string(m->value) : "none";
	bool ok = want ? (m && std::fabs(m->value - *want) <= tolerance) : !m;
	info(id + " " + scope + " = " + got + (ok ? "" : "  expected " + (want ? std::to_string(*want) : "none")));
	check(ok, id + " at " + scope);
}

// The per-queue, per-VM checks of one driver between snapshots a and b.
void check_driver(const Driver &d, const Expect &e, const Taken &a, const Taken &b, const hwsig::Interval &iv)
{
	std::size_t failed_before = failures.size();
	struct ShowOnFailure {
		const Driver &d;
		std::size_t before;
		~ShowOnFailure()
		{
			if (failures.size() > before)
				d.show_stderr();
		}
	} show{d, failed_before};
	std::string p = std::to_string(d.pid());
	std::string rx = "vq:" + p + ":0:rx", tx = "vq:" + p + ":1:tx", vm = "vm:" + d.name();
	const char *rx_series = hwsig::series::kVhostRxBuffers;
	check_hist(tx, hist_delta(a, b, tx), e.tx);
	check_hist(rx, hist_delta(a, b, rx, rx_series), e.rx);
	check_hist(vm + " tx", hist_delta(a, b, vm), e.tx);
	check_hist(vm + " rx", hist_delta(a, b, vm, rx_series), e.rx);
	check(!b.snap.histogram(hwsig::series::kVhostDepth, rx), rx + " has a TX depth histogram");
	auto stalls = counter_delta(a, b, hwsig::series::kVhostStalls, rx);
	info(rx + ": stalls " + (stalls ? std::to_string(static_cast<long long>(*stalls)) : "none") +
	     ", expected " + std::to_string(e.stalls));
	check(stalls && *stalls == static_cast<double>(e.stalls), rx + " stall count");
	auto vm_stalls = counter_delta(a, b, hwsig::series::kVhostStalls, vm);
	check(vm_stalls && *vm_stalls == static_cast<double>(e.stalls), vm + " stall count");
	check(!b.snap.counter(hwsig::series::kVhostStalls, tx), tx + " has a stall counter (TX has none)");
	// The stall rate's time is the source's own reading of the map.
	double dt = static_cast<double>(b.snap.read_ns(hwsig::series::kVhostStalls) -
					a.snap.read_ns(hwsig::series::kVhostStalls)) /
		    1e9;
	for (const auto &scope : {tx, vm}) {
		check_metric(iv, "vhost.queue_depth_p50", scope, expected_percentile(e.tx, 0.5));
		check_metric(iv, "vhost.queue_depth_p99", scope, expected_percentile(e.tx, 0.99));
	}
	// RX: the low end of the free buffers, and the share of empty rings.
	std::uint64_t rx_samples = 0;
	for (auto n : e.rx)
		rx_samples += n;
	for (const auto &scope : {rx, vm}) {
		check_metric(iv, "vhost.rx_buffers_p1", scope, expected_percentile(e.rx, 0.01));
		check_metric(iv, "vhost.rx_buffers_p50", scope, expected_percentile(e.rx, 0.5));
		check_metric(iv, "vhost.rx_empty_ratio", scope,
			     rx_samples ? std::optional<double>(static_cast<double>(e.rx[0]) / rx_samples) : std::nullopt,
			     1e-12);
	}
	check_metric(iv, "vhost.queue_depth_p99", rx, std::nullopt);
	check_metric(iv, "vhost.ring_stalls_ps", rx, static_cast<double>(e.stalls) / dt, 1e-6 * (1 + e.stalls));
	check_metric(iv, "vhost.ring_stalls_ps", vm, static_cast<double>(e.stalls) / dt, 1e-6 * (1 + e.stalls));
}

// ---- the phases ----

// vhost_net absent: the source and hwsigctl say "vhost not loaded", the
// other collectors carry on.
void phase_not_loaded(hwsig::Source &source)
{
	if (module_loaded("vhost_net")) {
		auto [rc, out] = shell("rmmod vhost_net");
		check(rc == 0, "rmmod vhost_net (to start without it): " + out);
	}
	Taken t = take(source);
	for (const auto &id : hwsig::vhost_metric_ids()) {
		std::string reason;
		for (const auto &u : t.snap.unavailable())
			if (u.id == id && u.scope == "system")
				reason = u.reason;
		info("not loaded: " + id + ": " + reason);
		check(reason == "vhost not loaded (no vhost_net module)", id + " without vhost_net: '" + reason + "'");
	}
	check(t.snap.histograms().empty() && t.snap.counters().empty(), "series without vhost_net");
	if (hwsig::path_exists("/bin/hwsigctl")) {
		auto [rc, out] = shell("hwsigctl stat -c 1 -i 1 --format json");
		bool said = out.find("{\"id\":\"vhost.queue_depth_p50\",\"scope\":\"system\",\"reason\":\"vhost not "
				     "loaded (no vhost_net module)\",\"code\":\"no_target\"}") != std::string::npos;
		// Nothing else disturbed: no other metric's note mentions vhost, and
		// the other layers still report values.
		std::size_t values = 0;
		for (std::size_t at = out.find("\"value\":"); at != std::string::npos; at = out.find("\"value\":", at + 1))
			++values;
		bool others = values > 0;
		std::size_t mentions = 0;
		for (std::size_t at = out.find("vhost"); at != std::string::npos; at = out.find("vhost", at + 1)) {
			std::size_t open = out.rfind('{', at);
			if (open == std::string::npos || out.compare(open, 13, "{\"id\":\"vhost.") != 0)
				++mentions;
		}
		info(std::string("hwsigctl stat without vhost_net: exit ") + std::to_string(rc) + ", vhost unavailable: " +
		     (said ? "yes" : "no") + ", values of other metrics: " + std::to_string(values) +
		     ", other notes mentioning vhost: " + std::to_string(mentions));
		for (std::size_t at = out.find("{\"id\":\"sched.runq_wait_p50_us\""); at != std::string::npos;
		     at = out.find("{\"id\":\"sched.runq_wait_p50_us\"", at + 1))
			info("(for the record) " + out.substr(at, out.find('}', at) - at + 1));
		check(rc == 0 && said, "hwsigctl stat --format json without vhost_net: " + out.substr(0, 300));
		check(others && mentions == 0, "other layers disturbed without vhost_net");
		auto [hrc, hout] = shell("hwsigctl hist vhost 1 1");
		info("hwsigctl hist vhost without vhost_net: exit " + std::to_string(hrc) + ": " +
		     hout.substr(0, hout.find('\n')));
		check(hrc == 1 && hout.find("vhost not loaded") != std::string::npos, "hist vhost without vhost_net");
	} else {
		check(false, "/bin/hwsigctl missing from the initramfs");
	}
}

std::string attach_report()
{
	std::string s;
	for (auto set : {hwsig::VhostAttach::Fentry, hwsig::VhostAttach::Kprobe}) {
		try {
			hwsig::VhostCollector p(set);
			s += std::string(s.empty() ? "" : "; ") + hwsig::vhost_attach_name(set) + ": attaches";
		} catch (const std::exception &e) {
			s += std::string(s.empty() ? "" : "; ") + hwsig::vhost_attach_name(set) + ": " + e.what();
		}
	}
	return s;
}

void phase_one(hwsig::Source &source)
{
	info("-- one driver: tx:90:4 tx:10:32 rxstall:16:5 rxfill:32");
	Driver d("vc-one", {"tx:90:4", "tx:10:32", "rxstall:16:5", "rxfill:32"});
	d.ready();
	Taken a = take(source);
	d.send("go");
	Expect e = d.until_done(300);
	Taken b = take(source);
	check(d.finish() == 0, "vc-one: exit status");
	auto iv = hwsig::derive(a.snap, b.snap, hwsig::vhost_metric_ids());
	check_driver(d, e, a, b, iv);
	// The mixed TX run: p50 4, p99 32, exactly.
	check_metric(iv, "vhost.queue_depth_p50", "vq:" + std::to_string(d.pid()) + ":1:tx", 4.0);
	check_metric(iv, "vhost.queue_depth_p99", "vq:" + std::to_string(d.pid()) + ":1:tx", 32.0);
	// Nothing but this driver ran: the system equals it.
	check_hist("system tx", hist_delta(a, b, "system"), e.tx);
	check_hist("system rx", hist_delta(a, b, "system", hwsig::series::kVhostRxBuffers), e.rx);
}

void phase_two(hwsig::Source &source)
{
	info("-- two drivers at once: vc-a (tx:30:16 rxstall:24:7 rxfill:17) and "
	     "vc-b (--ring 128 tx:25:100 rxstall:12:3 rxfill:4 rxfill:5 tx:5:1)");
	Driver a("vc-a", {"tx:30:16", "rxstall:24:7", "rxfill:17"});
	Driver b("vc-b", {"--ring", "128", "tx:25:100", "rxstall:12:3", "rxfill:4", "rxfill:5", "tx:5:1"});
	a.ready();
	b.ready();
	check(a.worker() != b.worker(), "the two drivers share a worker");
	Taken s0 = take(source);
	a.send("go");
	b.send("go");
	Expect ea = a.until_done(300);
	Expect eb = b.until_done(300);
	Taken s1 = take(source);
	check(a.finish() == 0, "vc-a: exit status");
	check(b.finish() == 0, "vc-b: exit status");
	bool both = false;
	int na = 0, nb = 0;
	for (const auto &vm : s1.vms) {
		na += vm.name == "vc-a" && vm.pid == a.pid();
		nb += vm.name == "vc-b" && vm.pid == b.pid();
	}
	both = na == 1 && nb == 1;
	check(both, "discovery sees vc-a and vc-b as two VMs");
	auto iv = hwsig::derive(s0.snap, s1.snap, hwsig::vhost_metric_ids());
	check_driver(a, ea, s0, s1, iv);
	check_driver(b, eb, s0, s1, iv);
	check_hist("system tx", hist_delta(s0, s1, "system"), plus(ea.tx, eb.tx));
	check_hist("system rx", hist_delta(s0, s1, "system", hwsig::series::kVhostRxBuffers), plus(ea.rx, eb.rx));
	// Depth 100 is in the log2 slot [64, 128): p50 within it.
	const hwsig::Metric *m = metric(iv, "vhost.queue_depth_p50", "vq:" + std::to_string(b.pid()) + ":1:tx");
	check(m && m->value >= 64 && m->value <= 127, "vc-b TX p50 within [64, 127]");
}

bool source_attached(const Taken &t)
{
	return t.snap.histogram(hwsig::series::kVhostDepth, "system") != nullptr;
}

std::string system_note(const Taken &t)
{
	for (const auto &u : t.snap.unavailable())
		if (u.scope == "system" && u.id == "vhost.queue_depth_p50")
			return u.reason;
	return "";
}

// fentry pins vhost_net; kprobes do not, and a kprobe-attached source
// re-attaches to a reloaded module by itself.
void phase_reload(hwsig::SourcePtr &source)
{
	info("-- module pinning and reload");
	auto [rc, out] = shell("rmmod vhost_net");
	info("rmmod vhost_net with the fentry source attached: exit " + std::to_string(rc) + " " +
	     out.substr(0, out.find('\n')));
	check(rc != 0, "rmmod vhost_net succeeded under attached fentry programs (Documentation/vhost.rst says it "
		       "cannot)");
	if (rc == 0)
		insmod_all();
	source.reset();
	std::tie(rc, out) = shell("rmmod vhost_net");
	info("rmmod vhost_net after the source is gone: exit " + std::to_string(rc) + " " + out.substr(0, out.find('\n')));
	check(rc == 0, "rmmod vhost_net after detaching: " + out);
	source = hwsig::make_bpf_vhost_source(hwsig::VhostAttach::Kprobe);
	Taken t0 = take(*source);
	check(system_note(t0).rfind("vhost not loaded", 0) == 0, "kprobe source before insmod: '" + system_note(t0) + "'");
	insmod_all();
	Taken t1 = take(*source);
	check(source_attached(t1), "kprobe source did not attach after insmod: " + system_note(t1));
	std::tie(rc, out) = shell("rmmod vhost_net");
	info("rmmod vhost_net with the kprobe source attached: exit " + std::to_string(rc) + " " +
	     out.substr(0, out.find('\n')));
	check(rc == 0, "rmmod vhost_net under kprobes: " + out);
	Taken t2 = take(*source);
	info("after rmmod: " + system_note(t2));
	check(system_note(t2).rfind("vhost not loaded", 0) == 0, "kprobe source after rmmod: '" + system_note(t2) + "'");
	insmod_all();
	Taken t3 = take(*source);
	info(std::string("after insmod again: ") + (source_attached(t3) ? "attached" : "not attached: " + system_note(t3)));
	check(source_attached(t3), "kprobe source did not re-attach to the reloaded module: " + system_note(t3));
	Driver d("vc-reload", {"tx:5:7", "rxstall:3:1"});
	d.ready();
	Taken a = take(*source);
	d.send("go");
	Expect e = d.until_done(120);
	Taken b = take(*source);
	check(d.finish() == 0, "vc-reload: exit status");
	check_driver(d, e, a, b, hwsig::derive(a.snap, b.snap, hwsig::vhost_metric_ids()));
}

// As nobody without capabilities: the reason, no numbers, nothing thrown.
void phase_unprivileged()
{
	auto [st, text] = hwsig::test::run_as_nobody([] {
		auto source = hwsig::make_bpf_vhost_source();
		Taken t = take(*source);
		return system_note(t) + "\nseries=" +
		       std::to_string(t.snap.histograms().size() + t.snap.counters().size());
	});
	info("as nobody: " + text.substr(0, text.find('\n')));
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && text.find("needs root (CAP_BPF and CAP_PERFMON)") != std::string::npos &&
		      text.find("series=0") != std::string::npos,
	      "unprivileged vhost source: " + text);
}

// A device behind a vIOMMU (VIRTIO_F_ACCESS_PLATFORM, the driver's
// --viommu): its ring addresses are IOVAs, which are user addresses of a
// decoy area holding avail idx 0xabab. Every handler run is counted and
// none sampled, with each program set; stalls still count; the source
// says why the depths are unavailable.
void phase_viommu(hwsig::Source &source)
{
	for (auto set : {hwsig::VhostAttach::Fentry, hwsig::VhostAttach::Kprobe}) {
		hwsig::VhostCollector collector(set);
		std::string name = std::string("vc-iommu-") + hwsig::vhost_attach_name(set);
		info("-- vIOMMU, set " + std::string(hwsig::vhost_attach_name(set)) + ": " + name +
		     " --viommu tx:6:3 rxstall:5:2 rxfill:3");
		Driver d(name, {"--viommu", "tx:6:3", "rxstall:5:2", "rxfill:3"});
		d.ready();
		auto before = collector.queues();
		Taken a = take(source);
		d.send("go");
		Expect e = d.until_done(120);
		auto after = collector.queues();
		Taken b = take(source);
		check(d.finish() == 0, name + ": exit status");
		std::uint64_t runs[2] = {0, 0};
		for (const auto &s : e.tx)
			runs[1] += s;
		for (const auto &s : e.rx)
			runs[0] += s;
		for (bool tx : {false, true}) {
			hwsig::VhostQueueKey k;
			k.owner_tgid = static_cast<std::uint32_t>(d.pid());
			k.worker_tid = static_cast<std::uint32_t>(d.worker());
			k.queue = tx ? 1 : 0;
			k.tx = tx;
			auto it = after.find(k);
			check(it != after.end(), name + ": no " + (tx ? "tx" : "rx") + " queue");
			if (it == after.end())
				continue;
			hwsig::VhostQueueCounts zero;
			const auto &c0 = before.count(k) ? before.at(k) : zero;
			const auto &c = it->second;
			std::uint64_t handled = c.handled - c0.handled, viommu = c.viommu - c0.viommu;
			std::uint64_t samples = c.samples - c0.samples, stalls = c.stalls - c0.stalls;
			info(name + (tx ? " tx" : " rx") + ": handled " + std::to_string(handled) + ", viommu " +
			     std::to_string(viommu) + ", samples " + std::to_string(samples) + ", read errors " +
			     std::to_string(c.read_errors - c0.read_errors) + ", stalls " + std::to_string(stalls) +
			     " (driver: " + std::to_string(runs[tx]) + " runs, " +
			     std::to_string(tx ? 0 : e.stalls) + " stalls)");
			check(handled == runs[tx] && viommu == handled, name + " every run counted as vIOMMU");
			check(samples == 0 && c.read_errors == c0.read_errors, name + " no depth read through an IOVA");
			check(stalls == (tx ? 0 : e.stalls), name + " stalls");
		}
		auto iv = hwsig::derive(a.snap, b.snap, hwsig::vhost_metric_ids());
		std::string p = std::to_string(d.pid());
		for (auto [id, scope] : {std::pair<std::string, std::string>{"vhost.queue_depth_p99", "vq:" + p + ":1:tx"},
					 {"vhost.rx_buffers_p1", "vq:" + p + ":0:rx"},
					 {"vhost.rx_empty_ratio", "vm:" + name}}) {
			std::string reason;
			for (const auto &u : iv.unavailable)
				if (u.id == id && u.scope == scope)
					reason = u.reason;
			info(id + " " + scope + ": '" + reason + "'");
			check(!metric(iv, id, scope) && reason.find("vIOMMU") != std::string::npos,
			      name + ": " + id + " at " + scope + " says vIOMMU");
		}
		const hwsig::Metric *st = metric(iv, "vhost.ring_stalls_ps", "vq:" + p + ":0:rx");
		check(st && st->value > 0, name + ": stalls still reported behind a vIOMMU");
	}
}

// Each program set on its own (VhostCollector, not the source): same exact counts.
void phase_sets()
{
	for (auto set : {hwsig::VhostAttach::Fentry, hwsig::VhostAttach::Kprobe}) {
		std::optional<hwsig::VhostCollector> collector;
		try {
			collector.emplace(set);
		} catch (const std::exception &e) {
			info(std::string("-- set ") + hwsig::vhost_attach_name(set) + ": does not attach here: " + e.what());
			// Both sets attach on 6.1 (every hooked function has at most
			// 2 arguments).
			check(false, std::string("set ") + hwsig::vhost_attach_name(set) + " must attach on this kernel");
			continue;
		}
		std::string name = std::string("vc-") + (set == hwsig::VhostAttach::Kprobe ? "kp" : "fentry");
		info(std::string("-- set ") + hwsig::vhost_attach_name(set) + ": " + name +
		     " tx:6:3 rxstall:5:2 rxfill:3");
		Driver d(name, {"tx:6:3", "rxstall:5:2", "rxfill:3"});
		d.ready();
		auto before = collector->queues();
		d.send("go");
		Expect e = d.until_done(120);
		auto after = collector->queues();
		check(d.finish() == 0, name + ": exit status");
		for (bool tx : {false, true}) {
			hwsig::VhostQueueKey k;
			k.owner_tgid = static_cast<std::uint32_t>(d.pid());
			k.worker_tid = static_cast<std::uint32_t>(d.worker());
			k.queue = tx ? 1 : 0;
			k.tx = tx;
			hwsig::VhostQueueCounts zero;
			const auto &c0 = before.count(k) ? before.at(k) : zero;
			auto it = after.find(k);
			check(it != after.end(), name + ": no queue with key owner " + std::to_string(k.owner_tgid) +
							 " worker " + std::to_string(k.worker_tid) + (tx ? " tx" : " rx"));
			if (it == after.end())
				continue;
			auto d1 = Histogram::delta(c0.depth, it->second.depth);
			std::vector<std::uint64_t> got = d1 ? d1->counts : std::vector<std::uint64_t>{};
			got.resize(kSlots, 0);
			check_hist(name + (tx ? " tx" : " rx"), got, tx ? e.tx : e.rx);
			std::uint64_t stalls = it->second.stalls - c0.stalls;
			std::uint64_t handled = it->second.handled - c0.handled;
			std::uint64_t samples = it->second.samples - c0.samples;
			info(name + (tx ? " tx" : " rx") + ": stalls " + std::to_string(stalls) + ", handled " +
			     std::to_string(handled) + ", samples " + std::to_string(samples) + ", read errors " +
			     std::to_string(it->second.read_errors));
			check(stalls == (tx ? 0 : e.stalls), name + " stalls");
			check(handled == samples && it->second.read_errors == 0, name + " handled == samples");
		}
	}
}

// End to end: the real CLI in the guest, while a driver runs a long pattern.
void phase_cli()
{
	info("-- hwsigctl while vc-e2e runs tx:100000:6");
	Driver d("vc-e2e", {"tx:100000:6"});
	d.ready();
	d.send("go");
	auto [rc, out] = shell("hwsigctl stat -c 3 -i 1 --format json");
	std::string p50 = "{\"id\":\"vhost.queue_depth_p50\",\"value\":6,\"unit\":\"descriptors\",\"scope\":\"vm:vc-e2e\"";
	std::string p99 = "{\"id\":\"vhost.queue_depth_p99\",\"value\":6,\"unit\":\"descriptors\",\"scope\":\"vm:vc-e2e\"";
	std::string vq = "\"scope\":\"vq:" + std::to_string(d.pid()) + ":1:tx\"";
	bool has50 = out.find(p50) != std::string::npos, has99 = out.find(p99) != std::string::npos;
	info("hwsigctl stat --format json: exit " + std::to_string(rc) + "; vm:vc-e2e p50 6: " +
	     (has50 ? "yes" : "no") + ", p99 6: " + (has99 ? "yes" : "no") + ", " + vq + ": " +
	     (out.find(vq) != std::string::npos ? "yes" : "no"));
	if (!(has50 && has99)) {
		for (std::size_t at = out.find("vm:vc-e2e"); at != std::string::npos; at = out.find("vm:vc-e2e", at + 1))
			info("json: " + out.substr(out.rfind('{', at), out.find('}', at) - out.rfind('{', at) + 1));
		d.show_stderr();
	}
	check(rc == 0 && has50 && has99 && out.find(vq) != std::string::npos,
	      "hwsigctl stat does not show vhost.queue_depth_p50/p99 = 6 for vm:vc-e2e: " + out.substr(0, 400));
	auto [hrc, hout] = shell("hwsigctl hist vhost 1 1");
	std::istringstream lines(hout);
	std::string l, title = "vq = vq:" + std::to_string(d.pid()) + ":1:tx vm = vc-e2e";
	char six[64]; // the row of depth 6, as print_linear_log2_hist prints it
	std::snprintf(six, sizeof six, "%10u    %-10s : ", 6u, "");
	bool titled = false, row = false;
	while (std::getline(lines, l)) {
		info("hist: " + l);
		if (l.rfind(title, 0) == 0)
			titled = true;
		else if (titled && !row && l.rfind(six, 0) == 0)
			row = true;
	}
	check(hrc == 0 && titled && row, "hwsigctl hist vhost: no depth-6 row under '" + title + "'");
	// Three intervals: the first may end before the VM's queues were sampled.
	auto [trc, tout] = shell("hwsigctl stat -c 3 -i 1 --vm vc-e2e");
	std::istringstream tl(tout);
	bool table = false;
	while (std::getline(tl, l))
		if (l.find("vhost.queue_depth_p50") != std::string::npos && l.find("vm:vc-e2e") != std::string::npos) {
			info("table: " + l);
			table = true;
		}
	check(trc == 0 && table, "hwsigctl stat --vm vc-e2e table has no vhost.queue_depth_p50 line");
}

int run_test()
{
	auto source = hwsig::make_bpf_vhost_source();
	phase_not_loaded(*source);
	insmod_all();
	// The same source, loaded later: it attaches at its next collect.
	Taken t = take(*source);
	bool attached = t.snap.histogram(hwsig::series::kVhostDepth, "system") != nullptr;
	std::string why;
	for (const auto &u : t.snap.unavailable())
		if (u.scope == "system")
			why = u.reason;
	info(std::string("after insmod vhost_net: the source ") +
	     (attached ? "attached at its next collect" : "did not attach: " + why));
	check(attached, "source did not attach once vhost_net was loaded: " + why);
	info("program sets: " + attach_report());
	auto phase = [](const char *name, auto run) {
		try {
			run();
		} catch (const std::exception &e) {
			check(false, std::string(name) + ": " + e.what());
		}
	};
	if (attached) {
		phase("one driver", [&] { phase_one(*source); });
		phase("two drivers", [&] { phase_two(*source); });
		phase("reload", [&] { phase_reload(source); });
		phase("vIOMMU", [&] { phase_viommu(*source); });
	}
	phase("unprivileged", [] { phase_unprivileged(); });
	phase("program sets", [] { phase_sets(); });
	phase("hwsigctl", [] { phase_cli(); });
	if (failures.empty()) {
		std::printf("vmtest: PASS %s\n", kCase);
		return 0;
	}
	std::printf("vmtest: FAIL %s: %s%s\n", kCase, failures.front().c_str(),
		    failures.size() > 1 ? (" (+" + std::to_string(failures.size() - 1) + " more)").c_str() : "");
	return 1;
}

// ---- bench ----

struct RunStats {
	std::uint64_t ns = 0, cnt = 0;
};

RunStats prog_stats(int fd)
{
	struct bpf_prog_info info_ {};
	__u32 len = sizeof info_;
	RunStats s;
	if (bpf_obj_get_info_by_fd(fd, &info_, &len) == 0) {
		s.ns = info_.run_time_ns;
		s.cnt = info_.run_cnt;
	}
	return s;
}

const hwsig::SkeletonOps<hwsig_empty_vhost_bpf> kEmptyOps = {
	"empty_vhost", hwsig_empty_vhost_bpf__open_opts, hwsig_empty_vhost_bpf__load,
	hwsig_empty_vhost_bpf__attach, hwsig_empty_vhost_bpf__destroy,
};

// One program set's bench: the collector's programs and empty ones of the
// same kinds on the same hooks, attached together, over the same rounds.
void bench_set(hwsig::VhostAttach set)
{
	hwsig::VhostCollector collector(set);
	bool fentry = collector.attached_as() == hwsig::VhostAttach::Fentry;
	hwsig::Skeleton<hwsig_empty_vhost_bpf> empty(kEmptyOps, [&](hwsig_empty_vhost_bpf &s) {
		bpf_program__set_autoload(s.progs.empty_fe_handle_tx, fentry);
		bpf_program__set_autoload(s.progs.empty_fe_handle_rx, fentry);
		bpf_program__set_autoload(s.progs.empty_fe_enable_notify, fentry);
		bpf_program__set_autoload(s.progs.empty_kp_handle_tx, !fentry);
		bpf_program__set_autoload(s.progs.empty_kp_enable_notify, !fentry);
	});
	std::map<std::string, int> fds;
	for (auto [name, fd] : collector.programs())
		fds[name] = fd;
	std::map<std::string, int> empty_fds;
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, empty->obj)
	{
		if (bpf_program__autoload(prog))
			empty_fds[bpf_program__name(prog)] = bpf_program__fd(prog);
	}
	// Rounds of the same workload; each program's run_time_ns/run_cnt
	// over each round. TCG timings are noisy: the median round counts.
	const unsigned rounds = 3, batches = 200, depth = 8;
	const char *name = hwsig::vhost_attach_name(collector.attached_as());
	std::printf("vmbench: vhost collector set %s; workload per round: tx:%u:%u (one handle_tx per batch: "
		    "%u descriptors, then one vhost_enable_notify on the emptied TX ring) then rxstall:32:16 "
		    "(one vhost_enable_notify per stalled handle_rx); %u rounds\n",
		    name, batches, depth, depth, rounds);
	auto delta = [](const RunStats &a, const RunStats &b) { return RunStats{b.ns - a.ns, b.cnt - a.cnt}; };
	auto per_run = [](const RunStats &r) {
		return r.cnt ? static_cast<double>(r.ns) / static_cast<double>(r.cnt) : 0.0;
	};
	std::map<std::string, std::vector<double>> col_ns, emp_ns; // per round, ns/run
	std::vector<double> event_ns, event_ratio;
	std::string hook = fentry ? "empty_fe_handle_tx" : "empty_kp_handle_tx";
	for (unsigned r = 0; r < rounds; ++r) {
		std::map<std::string, RunStats> before, empty_before;
		for (auto [n, fd] : fds)
			before[n] = prog_stats(fd);
		for (auto [n, fd] : empty_fds)
			empty_before[n] = prog_stats(fd);
		Driver d("vc-bench" + std::to_string(r),
			 {"tx:" + std::to_string(batches) + ":" + std::to_string(depth), "rxstall:32:16"});
		d.ready();
		d.send("go");
		Expect e = d.until_done(600);
		d.finish();
		std::uint64_t handlers = 0;
		for (auto v : e.tx)
			handlers += v;
		for (auto v : e.rx)
			handlers += v;
		RunStats total;
		std::string line;
		for (auto [n, fd] : fds) {
			RunStats dl = delta(before[n], prog_stats(fd));
			total.ns += dl.ns;
			total.cnt += dl.cnt;
			col_ns[n].push_back(per_run(dl));
			char b[96];
			std::snprintf(b, sizeof b, " %s %llu x %.0f", n.c_str(), static_cast<unsigned long long>(dl.cnt),
				      per_run(dl));
			line += b;
		}
		for (auto [n, fd] : empty_fds) {
			RunStats dl = delta(empty_before[n], prog_stats(fd));
			emp_ns[n].push_back(per_run(dl));
			char b[96];
			std::snprintf(b, sizeof b, " %s %llu x %.0f", n.c_str(), static_cast<unsigned long long>(dl.cnt),
				      per_run(dl));
			line += b;
		}
		double ev = handlers ? static_cast<double>(total.ns) / static_cast<double>(handlers) : 0;
		event_ns.push_back(ev);
		event_ratio.push_back(emp_ns[hook].back() > 0 ? ev / emp_ns[hook].back() : 0);
		std::printf("vmbench: vhost %s round %u: %llu handler runs; ns/run:%s\n", name, r + 1,
			    static_cast<unsigned long long>(handlers), line.c_str());
	}
	auto median = [](std::vector<double> v) {
		std::sort(v.begin(), v.end());
		return v.empty() ? 0.0 : v[v.size() / 2];
	};
	// Per vhost event = per handler invocation (one per worker wake-up
	// and queue): every collector program's time in the round over them.
	std::printf("vmbench: vhost %s per handler event (median of %u rounds): collector %.0f ns (all its "
		    "programs), empty %s %.0f ns/run, ratio %.2f\n",
		    name, rounds, median(event_ns), hook.c_str(), median(emp_ns[hook]), median(event_ratio));
	for (auto [col, emp] : {std::pair<std::string, std::string>{"fe_handle_tx", "empty_fe_handle_tx"},
				{"fe_handle_rx", "empty_fe_handle_rx"},
				{"fe_enable_notify", "empty_fe_enable_notify"},
				{"kp_handle_tx", "empty_kp_handle_tx"},
				{"kp_enable_notify", "empty_kp_enable_notify"}}) {
		if (!col_ns.count(col) || !emp_ns.count(emp))
			continue;
		std::vector<double> ratios;
		for (std::size_t i = 0; i < col_ns[col].size(); ++i)
			ratios.push_back(emp_ns[emp][i] > 0 ? col_ns[col][i] / emp_ns[emp][i] : 0);
		std::printf("vmbench: vhost %s hook %s (median of %u rounds): collector %.0f ns/run, empty %.0f "
			    "ns/run, ratio %.2f\n",
			    name, col.c_str(), rounds, median(col_ns[col]), median(emp_ns[emp]), median(ratios));
	}
}

// The set Auto picks, then the kprobe fallback if that is another one.
int run_bench()
{
	const char *bench = "vhost-bench";
	try {
		insmod_all();
		int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0)
			throw hwsig::Error("bpf_enable_stats(BPF_STATS_RUN_TIME)", errno);
		hwsig::VhostAttach chosen = hwsig::VhostCollector().attached_as();
		bench_set(chosen);
		if (chosen != hwsig::VhostAttach::Kprobe)
			bench_set(hwsig::VhostAttach::Kprobe);
		close(stats_fd);
		std::printf("vmtest: PASS %s\n", bench);
		return 0;
	} catch (const std::exception &e) {
		std::printf("vmtest: FAIL %s: %s\n", bench, e.what());
		return 1;
	}
}

} // namespace

int main(int argc, char **argv)
{
	setvbuf(stdout, nullptr, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && std::string(argv[1]) == "--bench")
		return run_bench();
	try {
		return run_test();
	} catch (const std::exception &e) {
		std::printf("vmtest: FAIL %s: %s\n", kCase, e.what());
		return 1;
	}
}
