#include "hwsig/error.h"

#include <cerrno>
#include <cstring>

namespace hwsig {

static std::string compose(const std::string &doing, int err)
{
	if (err == 0)
		return doing;
	return doing + ": " + std::strerror(err);
}

Error::Error(const std::string &doing, int err) : std::runtime_error(compose(doing, err)), err_(err) {}

void throw_errno(const std::string &doing)
{
	throw Error(doing, errno);
}

} // namespace hwsig
