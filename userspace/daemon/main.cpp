// hwsigd entry point (work in progress: configuration only).
#include "config.h"

int main(int argc, char **argv)
{
	hwsigd::Config cfg;
	if (auto done = hwsigd::parse_config(argc, argv, cfg))
		return *done;
	return 0;
}
