// hwsigctl's side of hwsigd's local socket: while the daemon runs, its one
// set of collectors answers every reader (Documentation/hwsigd.rst).
#pragma once

#include <memory>
#include <string>

#include "hwsig/snapshot_wire.h"

namespace hwsig {

inline constexpr const char *kDaemonSocket = "/run/hwsig/hwsigd.sock";

struct DaemonStatus {
	std::string version;
	int pid = 0;
	bool owns_kmod = false; // hwsigd started hwsig.ko and will stop it
	double interval_s = 0;
};

class DaemonClient {
public:
	// nullptr when no daemon serves path (no socket, or a stale one nobody
	// listens on). Throws Error when one is there but cannot be used
	// (permission: not root and not in the socket's group).
	static std::unique_ptr<DaemonClient> connect_if_running(const std::string &path = kDaemonSocket);

	// A fresh snapshot taken by the daemon now. Throws Error.
	SharedSnapshot snapshot() const;
	DaemonStatus status() const;
	// The dump file's bytes of the last `seconds` of its history (0: all).
	std::string dump(double seconds) const;
	const std::string &path() const { return path_; }

private:
	explicit DaemonClient(std::string path) : path_(std::move(path)) {}
	std::string request(const std::string &what, int timeout_s = 5) const;
	std::string path_;
};

} // namespace hwsig
