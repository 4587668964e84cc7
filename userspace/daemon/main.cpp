// hwsigd: the always-on hwsig service (Documentation/hwsigd.rst).
#include "config.h"
#include "service.h"

int main(int argc, char **argv)
{
	hwsigd::Config cfg;
	if (auto done = hwsigd::parse_config(argc, argv, cfg))
		return *done;
	return hwsigd::run_service(cfg);
}
