// RAII owner of a memory mapping (mmap/munmap).
#pragma once

#include <cerrno>
#include <cstddef>
#include <string>
#include <sys/mman.h>
#include <sys/types.h>
#include <utility>

#include "hwsig/error.h"

namespace hwsig {

class Mapping {
public:
	Mapping() = default;
	// Adopts [addr, addr + length) obtained from mmap.
	Mapping(void *addr, std::size_t length) noexcept : addr_(addr), length_(length) {}
	Mapping(const Mapping &) = delete;
	Mapping &operator=(const Mapping &) = delete;
	Mapping(Mapping &&o) noexcept
	    : addr_(std::exchange(o.addr_, nullptr)), length_(std::exchange(o.length_, 0))
	{
	}
	Mapping &operator=(Mapping &&o) noexcept
	{
		if (this != &o) {
			reset();
			addr_ = std::exchange(o.addr_, nullptr);
			length_ = std::exchange(o.length_, 0);
		}
		return *this;
	}
	~Mapping() { reset(); }

	// mmap(fd) or throws Error("mapping <what>", errno).
	static Mapping map_fd(int fd, std::size_t length, int prot, int flags, off_t offset,
			      const std::string &what)
	{
		if (length == 0)
			throw Error("mapping " + what + ": zero length", EINVAL);
		void *p = ::mmap(nullptr, length, prot, flags, fd, offset);
		if (p == MAP_FAILED)
			throw_errno("mapping " + what);
		return Mapping(p, length);
	}
	// Zero-filled private anonymous memory (tests, benchmarks).
	static Mapping anonymous(std::size_t length)
	{
		if (length == 0)
			throw Error("mapping anonymous memory: zero length", EINVAL);
		void *p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			throw_errno("mapping anonymous memory");
		return Mapping(p, length);
	}

	void *data() const noexcept { return addr_; }
	std::size_t size() const noexcept { return length_; }
	explicit operator bool() const noexcept { return addr_ != nullptr; }
	void reset() noexcept
	{
		if (addr_)
			::munmap(addr_, length_);
		addr_ = nullptr;
		length_ = 0;
	}

private:
	void *addr_ = nullptr;
	std::size_t length_ = 0;
};

} // namespace hwsig
