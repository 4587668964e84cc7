// libFuzzer target: parse_schedstat and parse_task_schedstat never crash;
// errors come without numbers.
#include <cstdlib>
#include <set>
#include <string_view>

#include "hwsig/procfs.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size)
{
	std::string_view text(reinterpret_cast<const char *>(data), size);
	auto st = hwsig::parse_schedstat(text);
	if (st.error.empty() == st.cpus.empty())
		std::abort();
	if (st.error.empty() && (st.version < 15 || st.version > 17))
		std::abort();
	std::set<unsigned> cpus;
	for (const auto &c : st.cpus)
		if (!cpus.insert(c.cpu).second)
			std::abort();
	auto task = hwsig::parse_task_schedstat(text);
	if (!task.error.empty() && (task.on_cpu_ns || task.run_delay_ns || task.timeslices))
		std::abort();
	return 0;
}
