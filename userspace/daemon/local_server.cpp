#include "local_server.h"

#include <cerrno>
#include <cstring>
#include <grp.h>
#include <poll.h>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

namespace hwsigd {
namespace {

sockaddr_un address_of(const std::string &path)
{
	sockaddr_un addr{};
	addr.sun_family = AF_UNIX;
	if (path.size() >= sizeof(addr.sun_path))
		throw std::runtime_error("socket " + path + ": path too long");
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	return addr;
}

// True when a process accepts connections on path now.
bool someone_listens(const sockaddr_un &addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool live = connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) == 0;
	close(fd);
	return live;
}

// The socket's directory, when hwsigd has to make it (no systemd made it
// as RuntimeDirectory=): the unit's owner and mode, root:GROUP 0750, so
// that only root and the group reach the socket either way. An existing
// directory is left as it is.
void make_parent(const std::string &path, const struct group *g)
{
	auto slash = path.rfind('/');
	if (slash == 0 || slash == std::string::npos)
		return;
	std::string dir = path.substr(0, slash);
	if (mkdir(dir.c_str(), 0700) != 0) {
		if (errno == EEXIST)
			return;
		throw std::runtime_error("socket directory " + dir + ": " + std::strerror(errno));
	}
	// Not root (a test, an unprivileged run): the directory stays the
	// caller's own, 0700, as the socket does.
	bool grouped = g && chown(dir.c_str(), 0, g->gr_gid) == 0;
	if (g && !grouped)
		log(Level::Warning, "socket directory %s: cannot give it to group %s: %s", dir.c_str(), g->gr_name,
		    std::strerror(errno));
	if (chmod(dir.c_str(), grouped ? 0750 : 0700) != 0)
		throw std::runtime_error("socket directory " + dir + ": " + std::strerror(errno));
}

} // namespace

LocalServer::LocalServer(const std::string &path, const std::string &group, LocalHandler handler)
	: path_(path), handler_(std::move(handler))
{
	sockaddr_un addr = address_of(path);
	struct group *g = getgrnam(group.c_str());
	const gid_t gid = g ? g->gr_gid : 0;
	make_parent(path, g);
	struct stat st;
	if (lstat(path.c_str(), &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			throw std::runtime_error("socket " + path + ": exists and is not a socket");
		if (someone_listens(addr))
			throw std::runtime_error("socket " + path + ": another hwsigd serves it");
		log(Level::Info, "replacing the stale socket %s (left by a hwsigd that did not exit)", path.c_str());
		unlink(path.c_str());
	}
	listen_fd_.reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
	// Created 0660 from the start: no window where anyone may connect.
	mode_t old = umask(0117);
	int rc = listen_fd_ ? bind(listen_fd_.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) : -1;
	int err = errno;
	umask(old);
	if (rc != 0 || listen(listen_fd_.get(), 16) != 0)
		throw std::runtime_error("socket " + path + ": " + std::strerror(rc != 0 ? err : errno));
	if (g) {
		if (chown(path.c_str(), 0, gid) != 0)
			log(Level::Warning, "socket %s: cannot give it to group %s: %s", path.c_str(), group.c_str(),
			    std::strerror(errno));
	} else {
		log(Level::Warning, "socket %s: no group '%s' on this host: only root may read it", path.c_str(),
		    group.c_str());
	}
	stop_fd_.reset(eventfd(0, EFD_CLOEXEC));
	if (!stop_fd_)
		throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
	thread_ = std::thread([this] { serve(); });
}

LocalServer::~LocalServer()
{
	std::uint64_t one = 1;
	if (write(stop_fd_.get(), &one, sizeof(one)) < 0)
		log(Level::Warning, "stopping the local socket thread: %s", std::strerror(errno));
	if (thread_.joinable())
		thread_.join();
	unlink(path_.c_str());
}

void LocalServer::serve()
{
	for (;;) {
		pollfd p[2] = {{listen_fd_.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log(Level::Error, "local socket: poll: %s", std::strerror(errno));
			return;
		}
		if (p[1].revents)
			return;
		hwsig::Fd conn(accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
		if (!conn)
			continue;
		answer(conn.get());
	}
}

// One connection at a time, each bounded in time: a reader that stalls
// costs the others at most the timeouts, never the sampling loop.
void LocalServer::answer(int fd)
{
	timeval tv{1, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tv.tv_sec = 5;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	char buf[64];
	std::size_t got = 0;
	while (got < sizeof(buf)) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);
		if (n <= 0)
			break;
		got += static_cast<std::size_t>(n);
		if (std::memchr(buf, '\n', got))
			break;
	}
	const char *nl = static_cast<const char *>(std::memchr(buf, '\n', got));
	std::string out;
	if (!nl) {
		out = "error\trequest is not one line of at most 63 bytes\n";
	} else {
		try {
			out = handler_(std::string(buf, static_cast<std::size_t>(nl - buf)));
		} catch (const std::exception &e) {
			out = std::string("error\t") + e.what() + "\n";
		}
	}
	std::size_t sent = 0;
	while (sent < out.size()) {
		ssize_t n = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			log(Level::Debug, "local socket: a reader left before its answer was sent");
			return;
		}
		sent += static_cast<std::size_t>(n);
	}
}

} // namespace hwsigd
