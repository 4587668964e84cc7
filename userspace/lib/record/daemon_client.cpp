// One request per connection: "snapshot\n" or "status\n"; the daemon
// answers and closes. Reads are bounded in size and time so that a wedged
// daemon cannot hang hwsigctl.
#include "hwsig/daemon_client.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "hwsig/error.h"
#include "hwsig/fd.h"

namespace hwsig {
namespace {

constexpr std::size_t kMaxAnswer = 64u << 20; // 4096 CPUs of snapshot fit many times
constexpr int kTimeoutS = 5;
constexpr int kDumpTimeoutS = 120;

// -1 with errno when connect fails.
int connect_unix(const std::string &path, int timeout_s = kTimeoutS)
{
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	if (path.size() >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	timeval tv{timeout_s, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

} // namespace

std::unique_ptr<DaemonClient> DaemonClient::connect_if_running(const std::string &path)
{
	int fd = connect_unix(path);
	if (fd < 0) {
		if (errno == ENOENT || errno == ECONNREFUSED || errno == ENOTDIR)
			return nullptr;
		if (errno == EACCES || errno == EPERM)
			throw Error("hwsigd runs, but its socket " + path +
				    " is for root and the hwsig group (add yourself: adduser $USER hwsig)");
		throw_errno("connecting to hwsigd at " + path);
	}
	close(fd); // a probe: every request has its own connection
	return std::unique_ptr<DaemonClient>(new DaemonClient(path));
}

std::string DaemonClient::request(const std::string &what, int timeout_s) const
{
	Fd fd(connect_unix(path_, timeout_s));
	if (!fd)
		throw_errno("connecting to hwsigd at " + path_);
	std::string line = what + "\n";
	if (send(fd.get(), line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
		throw_errno("asking hwsigd for its " + what);
	std::string answer;
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd.get(), buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				throw Error("hwsigd did not answer within " + std::to_string(timeout_s) + " s");
			throw_errno("reading hwsigd's " + what);
		}
		if (n == 0)
			break;
		answer.append(buf, static_cast<std::size_t>(n));
		if (answer.size() > kMaxAnswer)
			throw Error("hwsigd's " + what + " is larger than " + std::to_string(kMaxAnswer >> 20) + " MiB");
	}
	if (answer.rfind("error\t", 0) == 0) {
		auto end = answer.find('\n');
		throw Error("hwsigd: " + answer.substr(6, end == std::string::npos ? end : end - 6));
	}
	return answer;
}

SharedSnapshot DaemonClient::snapshot() const
{
	return decode_snapshot(request("snapshot"));
}

std::string DaemonClient::dump(double seconds) const
{
	char what[48];
	std::snprintf(what, sizeof(what), "dump %.3f", seconds);
	// Minutes of a large host's per-CPU history take seconds to encode.
	return request(what, kDumpTimeoutS);
}

DaemonStatus DaemonClient::status() const
{
	std::string a = request("status");
	// hwsigd <TAB> version <TAB> pid <TAB> owns_kmod(0|1) <TAB> interval_s
	DaemonStatus st;
	std::vector<std::string> f;
	std::size_t start = 0;
	while (start <= a.size()) {
		std::size_t tab = a.find_first_of("\t\n", start);
		if (tab == std::string::npos)
			break;
		f.push_back(a.substr(start, tab - start));
		start = tab + 1;
	}
	if (f.size() < 5 || f[0] != "hwsigd")
		throw Error("hwsigd's status is not understood: '" + a.substr(0, 80) + "'");
	st.version = f[1];
	st.pid = std::atoi(f[2].c_str());
	st.owns_kmod = f[3] == "1";
	st.interval_s = std::atof(f[4].c_str());
	return st;
}

} // namespace hwsig
