#include "schedstat_truth.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "hwsig/fs.h"
#include "hwsig/parse.h"

using namespace hwsig;

namespace hwsig_test {

TaskTotals task_totals(int pid)
{
	TaskTotals t;
	std::string dir = "/proc/" + std::to_string(pid) + "/task";
	for (const std::string &tid : list_dir(dir)) {
		FileRead sched = read_file(dir + "/" + tid + "/schedstat");
		FileRead stat = read_file(dir + "/" + tid + "/stat");
		REQUIRE(sched.data);
		REQUIRE(stat.data);
		auto fields = split_ws(*sched.data);
		REQUIRE(fields.size() == 3);
		auto run = parse_u64(fields[0]), delay = parse_u64(fields[1]), pcount = parse_u64(fields[2]);
		REQUIRE(run);
		REQUIRE(delay);
		REQUIRE(pcount);
		t.run_ns += *run;
		t.run_delay_ns += *delay;
		t.pcount += *pcount;
		++t.tasks;
		// The state follows the parenthesised comm: "pid (comm) S ...".
		auto paren = stat.data->rfind(')');
		REQUIRE(paren != std::string::npos);
		if (stat.data->substr(paren + 2, 1) != "S")
			t.all_asleep = false;
	}
	return t;
}

TaskTotals parked_totals(int pid)
{
	TaskTotals prev = task_totals(pid);
	for (int i = 0; i < 100; ++i) {
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		TaskTotals cur = task_totals(pid);
		if (cur.all_asleep && prev.all_asleep && cur.pcount == prev.pcount &&
		    cur.run_delay_ns == prev.run_delay_ns && cur.tasks == prev.tasks)
			return cur;
		prev = cur;
	}
	FAIL("test child " << pid << " never settled");
	return prev;
}

} // namespace hwsig_test
