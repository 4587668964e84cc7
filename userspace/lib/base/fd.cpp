#include "hwsig/fd.h"

#include <unistd.h>

namespace hwsig {

void Fd::reset(int fd) noexcept
{
	if (fd_ >= 0)
		::close(fd_);
	fd_ = fd;
}

} // namespace hwsig
