#include <catch2/catch.hpp>

#include "hwsig/fs.h"
#include "hwsig/parse.h"

using namespace hwsig;

TEST_CASE("parse_u64 is strict", "[parse]")
{
	CHECK(parse_u64("0") == 0u);
	CHECK(parse_u64(" 18446744073709551615\n") == 18446744073709551615ull);
	CHECK_FALSE(parse_u64("18446744073709551616")); // overflow
	CHECK_FALSE(parse_u64("-1"));
	CHECK_FALSE(parse_u64("+1"));
	CHECK_FALSE(parse_u64(""));
	CHECK_FALSE(parse_u64("12a"));
	CHECK_FALSE(parse_u64("1 2"));
}

TEST_CASE("parse_i64 and parse_double", "[parse]")
{
	CHECK(parse_i64("-42") == -42);
	CHECK_FALSE(parse_i64("9223372036854775808"));
	CHECK(parse_double("12.50") == Approx(12.5));
	CHECK(parse_double("-0.25") == Approx(-0.25));
	CHECK_FALSE(parse_double("1e400"));
	CHECK_FALSE(parse_double("nan"));
	CHECK_FALSE(parse_double("1.2.3"));
	CHECK_FALSE(parse_double("."));
}

TEST_CASE("split helpers", "[parse]")
{
	auto f = split_ws("  cpu0 1\t2  3 ");
	REQUIRE(f.size() == 4);
	CHECK(f[0] == "cpu0");
	CHECK(f[3] == "3");
	auto l = split_lines("a\nb\n\nc\n");
	REQUIRE(l.size() == 4);
	CHECK(l[2].empty());
	CHECK(l[3] == "c");
	CHECK(split_lines("").empty());
}

TEST_CASE("parse_cpu_list", "[parse]")
{
	auto c = parse_cpu_list("0-3,8,10-11\n");
	REQUIRE(c);
	CHECK(*c == std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11});
	CHECK(parse_cpu_list("")->empty());
	CHECK_FALSE(parse_cpu_list("3-1"));
	CHECK_FALSE(parse_cpu_list("0-"));
	CHECK_FALSE(parse_cpu_list("0,,1"));
	CHECK_FALSE(parse_cpu_list("0-99999999"));
}

TEST_CASE("join_path and read_file", "[fs]")
{
	CHECK(join_path("/", "/proc/stat") == "/proc/stat");
	CHECK(join_path("/x/", "proc/stat") == "/x/proc/stat");
	CHECK(join_path("fx", "/proc") == "fx/proc");
	auto missing = read_file("/nonexistent/hwsig/file");
	CHECK_FALSE(missing.data);
	CHECK(missing.err == ENOENT);
	auto self = read_file("/proc/self/stat");
	REQUIRE(self.data);
	CHECK(self.data->find('(') != std::string::npos);
	auto big = read_file("/proc/self/stat", 4);
	CHECK_FALSE(big.data);
	CHECK(big.err == EFBIG);
}

TEST_CASE("parse_kernel_u64 takes a number only as the kernel prints it", "[parse]")
{
	CHECK(hwsig::parse_kernel_u64("0") == 0u);
	CHECK(hwsig::parse_kernel_u64("18446744073709551615") == 18446744073709551615ull);
	CHECK(hwsig::parse_kernel_u64("4096") == 4096u);
	CHECK_FALSE(hwsig::parse_kernel_u64(""));
	CHECK_FALSE(hwsig::parse_kernel_u64("18446744073709551616")); // overflow
	CHECK_FALSE(hwsig::parse_kernel_u64("007"));                  // leading zero
	CHECK_FALSE(hwsig::parse_kernel_u64(" 7"));
	CHECK_FALSE(hwsig::parse_kernel_u64("7 "));
	CHECK_FALSE(hwsig::parse_kernel_u64("+7"));
	CHECK_FALSE(hwsig::parse_kernel_u64("-7"));
	CHECK_FALSE(hwsig::parse_kernel_u64("7kB"));
}
