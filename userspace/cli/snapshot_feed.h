// Where hwsigctl's snapshots come from: hwsigd's collectors over its local
// socket when the daemon runs (no second copy of any BPF program, no
// reconfiguration of hwsig.ko), else a Sampler of its own.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <string>
#include <vector>

#include "hwsig/daemon_client.h"
#include "hwsig/sampler.h"

namespace hwsigctl {

class SnapshotFeed {
public:
	virtual ~SnapshotFeed() = default;
	virtual hwsig::Snapshot take() = 0;
	virtual const std::vector<hwsig::Vm> &vms() const = 0;
	virtual std::vector<std::string> claimed_ids() const = 0;
	// "hwsigd (pid N)" or "this process": for -v and error messages.
	virtual std::string origin() const = 0;
};

struct FeedOptions {
	hwsig::SourceOptions sources;
	bool use_daemon = true; // false: --no-daemon, or options the daemon cannot honour
	// --resctrl: the daemon serves only when its own resctrl is on
	// (hwsigd's resctrl = true), else this process samples.
	bool wants_resctrl = false;
	std::string socket;     // hwsigd's socket (HWSIG_SOCKET overrides the default)
};

// The collector switches stat and top share: --no-bpf, --no-kmod, --no-pmu,
// --no-daemon, --resctrl.
struct CollectorSwitches {
	bool no_bpf = false, no_kmod = false, no_pmu = false, no_daemon = false;
	bool resctrl = false;
};
void add_collector_options(boost::program_options::options_description &d, CollectorSwitches &s);
// Where the snapshots come from: hwsigd's collectors unless a switch asks
// for something the daemon cannot honour.
FeedOptions feed_options(const CollectorSwitches &s, const std::string &root);

// Throws hwsig::Error when a daemon runs but cannot be read.
std::unique_ptr<SnapshotFeed> open_feed(const FeedOptions &o);

// A Sampler of this process's own over these sources.
std::unique_ptr<SnapshotFeed> sampler_feed(std::vector<hwsig::SourcePtr> sources, const std::string &root);
// The snapshots of the daemon behind client (its first one is read now).
std::unique_ptr<SnapshotFeed> daemon_feed(std::unique_ptr<hwsig::DaemonClient> client);

// HWSIG_SOCKET, else /run/hwsig/hwsigd.sock.
std::string daemon_socket_path();

} // namespace hwsigctl
