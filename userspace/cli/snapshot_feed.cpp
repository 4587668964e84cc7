#include "snapshot_feed.h"

#include <algorithm>
#include <cstdlib>

#include "hwsig/daemon_client.h"

namespace hwsigctl {

void add_collector_options(boost::program_options::options_description &d, CollectorSwitches &s)
{
	namespace po = boost::program_options;
	d.add_options()
		("no-bpf", po::bool_switch(&s.no_bpf), "do not attach BPF collectors")
		("no-kmod", po::bool_switch(&s.no_kmod), "do not use /dev/hwsig (use perf_event_open)")
		("no-pmu", po::bool_switch(&s.no_pmu), "do not program hardware counters at all")
		("no-daemon", po::bool_switch(&s.no_daemon),
		 "sample in this process even while hwsigd runs (loads its own collectors)")
		("resctrl", po::bool_switch(&s.resctrl),
		 "LLC occupancy and memory bandwidth per VM from resctrl: makes a monitoring group per VM "
		 "in /sys/fs/resctrl, removed at exit (needs root)");
}

FeedOptions feed_options(const CollectorSwitches &s, const std::string &root)
{
	FeedOptions feed;
	feed.sources.root = root;
	feed.sources.bpf = !s.no_bpf;
	feed.sources.kmod = !s.no_kmod;
	feed.sources.pmu = !s.no_pmu;
	feed.sources.resctrl = s.resctrl;
	feed.wants_resctrl = s.resctrl;
	feed.use_daemon = !(s.no_daemon || s.no_bpf || s.no_kmod || s.no_pmu);
	return feed;
}

namespace {

class LocalFeed : public SnapshotFeed {
public:
	LocalFeed(std::vector<hwsig::SourcePtr> sources, const std::string &root) : sampler_(std::move(sources), root)
	{
	}
	hwsig::Snapshot take() override { return sampler_.take(); }
	const std::vector<hwsig::Vm> &vms() const override { return sampler_.vms(); }
	std::vector<std::string> claimed_ids() const override { return sampler_.claimed_ids(); }
	std::string origin() const override { return "this process"; }

private:
	hwsig::Sampler sampler_;
};

class DaemonFeed : public SnapshotFeed {
public:
	explicit DaemonFeed(std::unique_ptr<hwsig::DaemonClient> client) : client_(std::move(client))
	{
		pid_ = client_->status().pid;
		// The claimed ids come with every snapshot; the first one tells them.
		last_ = client_->snapshot();
	}
	hwsig::Snapshot take() override
	{
		if (first_) {
			first_ = false;
			return last_.snapshot;
		}
		last_ = client_->snapshot();
		return last_.snapshot;
	}
	const std::vector<hwsig::Vm> &vms() const override { return last_.vms; }
	std::vector<std::string> claimed_ids() const override { return last_.claimed_ids; }
	std::string origin() const override { return "hwsigd (pid " + std::to_string(pid_) + ")"; }
	// Whether the daemon's resctrl source is on: it claims the ids and
	// does not say it is off.
	bool has_resctrl() const
	{
		const auto &ids = last_.claimed_ids;
		if (std::find(ids.begin(), ids.end(), hwsig::kResctrlProbeId) == ids.end())
			return false;
		for (const auto &note : last_.snapshot.unavailable())
			if (note.id == hwsig::kResctrlProbeId && note.scope == "system" &&
			    note.reason.rfind(hwsig::kResctrlOffPrefix, 0) == 0)
				return false;
		return true;
	}

private:
	std::unique_ptr<hwsig::DaemonClient> client_;
	hwsig::SharedSnapshot last_;
	bool first_ = true;
	int pid_ = 0;
};

} // namespace

std::string daemon_socket_path()
{
	const char *env = std::getenv("HWSIG_SOCKET");
	return env && *env ? env : hwsig::kDaemonSocket;
}

std::unique_ptr<SnapshotFeed> open_feed(const FeedOptions &o)
{
	if (o.use_daemon && o.sources.root == "/") {
		if (auto client = hwsig::DaemonClient::connect_if_running(o.socket.empty() ? daemon_socket_path()
											  : o.socket)) {
			auto feed = std::make_unique<DaemonFeed>(std::move(client));
			// A daemon without resctrl cannot honour --resctrl, as
			// for the --no-* switches: this process samples.
			if (!o.wants_resctrl || feed->has_resctrl())
				return feed;
		}
	}
	return std::make_unique<LocalFeed>(hwsig::default_sources(o.sources), o.sources.root);
}

std::unique_ptr<SnapshotFeed> sampler_feed(std::vector<hwsig::SourcePtr> sources, const std::string &root)
{
	return std::make_unique<LocalFeed>(std::move(sources), root);
}

std::unique_ptr<SnapshotFeed> daemon_feed(std::unique_ptr<hwsig::DaemonClient> client)
{
	return std::make_unique<DaemonFeed>(std::move(client));
}

} // namespace hwsigctl
