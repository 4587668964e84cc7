#include "hwsig/proc_alive.h"

#include "hwsig/fs.h"
#include "hwsig/parse.h"

namespace hwsig {

bool status_is_dead(std::string_view status)
{
	for (auto line : split_lines(status)) {
		if (!line.starts_with("State:"))
			continue;
		auto state = trim(line.substr(6));
		return !state.empty() && (state[0] == 'Z' || state[0] == 'X' || state[0] == 'x');
	}
	return false;
}

bool process_alive(const std::string &root, int pid)
{
	auto status = read_file(join_path(root, "proc/" + std::to_string(pid) + "/status"));
	return status.data && !status_is_dead(*status.data);
}

} // namespace hwsig
