// RAII owner of a file descriptor.
#pragma once

#include <utility>

namespace hwsig {

class Fd {
public:
	Fd() = default;
	explicit Fd(int fd) noexcept : fd_(fd) {}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	Fd(Fd &&o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
	Fd &operator=(Fd &&o) noexcept
	{
		if (this != &o)
			reset(std::exchange(o.fd_, -1));
		return *this;
	}
	~Fd() { reset(); }

	int get() const noexcept { return fd_; }
	explicit operator bool() const noexcept { return fd_ >= 0; }
	int release() noexcept { return std::exchange(fd_, -1); }
	void reset(int fd = -1) noexcept;

private:
	int fd_ = -1;
};

} // namespace hwsig
