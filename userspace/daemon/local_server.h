// The local socket hwsigctl reads through (Documentation/hwsigd.rst,
// "Local socket"): one request line per connection, answered from the
// daemon's own collectors so that no reader loads a second copy of them.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "hwsig/fd.h"

namespace hwsigd {

// Returns the whole answer for one request word ("snapshot", "status").
using LocalHandler = std::function<std::string(const std::string &request)>;

class LocalServer {
public:
	// Binds path (mode 0660, group `group` when it exists) after checking
	// that no live daemon serves it: a stale socket left by a killed hwsigd
	// is replaced. Throws std::runtime_error with the reason.
	LocalServer(const std::string &path, const std::string &group, LocalHandler handler);
	~LocalServer(); // stops the thread, removes the socket file
	LocalServer(const LocalServer &) = delete;
	LocalServer &operator=(const LocalServer &) = delete;

private:
	void serve();
	void answer(int fd);

	std::string path_;
	LocalHandler handler_;
	hwsig::Fd listen_fd_, stop_fd_;
	std::thread thread_;
};

} // namespace hwsigd
