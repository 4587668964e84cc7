// The byte layout of every struct in <linux/hwsig.h>. The module, the reader
// and Documentation/abi.rst must agree on these numbers; a field that moves
// is an ABI break and must fail here before it ships.
#include <catch2/catch.hpp>

#include <cstddef>
#include <type_traits>

#include <linux/hwsig.h>

#define CHECK_FIELD(type, field, offset, size)                                   \
	do {                                                                     \
		CHECK(offsetof(struct type, field) == (offset));                 \
		CHECK(sizeof(((struct type *)nullptr)->field) == (size));        \
	} while (0)

TEST_CASE("hwsig_control_page layout", "[abi]")
{
	STATIC_REQUIRE(std::is_standard_layout_v<hwsig_control_page>);
	CHECK(sizeof(hwsig_control_page) == 512);
	CHECK_FIELD(hwsig_control_page, abi_version, 0, 4);
	CHECK_FIELD(hwsig_control_page, compat_version, 4, 4);
	CHECK_FIELD(hwsig_control_page, page_size, 8, 4);
	CHECK_FIELD(hwsig_control_page, nr_cpu_ids, 12, 4);
	CHECK_FIELD(hwsig_control_page, mmap_size, 16, 8);
	CHECK_FIELD(hwsig_control_page, ring_offset, 24, 8);
	CHECK_FIELD(hwsig_control_page, ring_stride, 32, 8);
	CHECK_FIELD(hwsig_control_page, data_offset, 40, 8);
	CHECK_FIELD(hwsig_control_page, ring_records, 48, 4);
	CHECK_FIELD(hwsig_control_page, record_size, 52, 4);
	CHECK_FIELD(hwsig_control_page, nr_events, 56, 4);
	CHECK_FIELD(hwsig_control_page, running, 60, 4);
	CHECK_FIELD(hwsig_control_page, sample_interval_ns, 64, 8);
	CHECK_FIELD(hwsig_control_page, config_generation, 72, 8);
	CHECK_FIELD(hwsig_control_page, clock_id, 80, 4);
	CHECK_FIELD(hwsig_control_page, __pad0, 84, 4);
	CHECK_FIELD(hwsig_control_page, seq, 88, 8);
	CHECK_FIELD(hwsig_control_page, ring_set, 96, 8);
	CHECK_FIELD(hwsig_control_page, __reserved, 104, 51 * 8);
	// The versions must stay the first two words forever: the reader reads
	// them before it trusts anything else.
	CHECK(offsetof(hwsig_control_page, __reserved) + sizeof(hwsig_control_page::__reserved) == 512);
}

TEST_CASE("hwsig_ring_header layout", "[abi]")
{
	STATIC_REQUIRE(std::is_standard_layout_v<hwsig_ring_header>);
	CHECK(sizeof(hwsig_ring_header) == 128);
	CHECK_FIELD(hwsig_ring_header, head, 0, 8);
	CHECK_FIELD(hwsig_ring_header, __pad_head, 8, 56);
	// Producer's head alone on the first 64-byte cache line.
	CHECK_FIELD(hwsig_ring_header, cpu, 64, 4);
	CHECK_FIELD(hwsig_ring_header, online, 68, 4);
	CHECK_FIELD(hwsig_ring_header, overwritten, 72, 8);
	CHECK_FIELD(hwsig_ring_header, ring_set, 80, 8);
	CHECK_FIELD(hwsig_ring_header, ring_records, 88, 4);
	CHECK_FIELD(hwsig_ring_header, __pad1, 92, 4);
	CHECK_FIELD(hwsig_ring_header, __reserved, 96, 32);
}

TEST_CASE("hwsig_record layout", "[abi]")
{
	STATIC_REQUIRE(std::is_standard_layout_v<hwsig_record>);
	CHECK(sizeof(hwsig_record) == 512);
	CHECK(HWSIG_MAX_EVENTS == 16);
	CHECK_FIELD(hwsig_record, seq, 0, 8);
	CHECK_FIELD(hwsig_record, time_ns, 8, 8);
	CHECK_FIELD(hwsig_record, cpu, 16, 4);
	CHECK_FIELD(hwsig_record, flags, 20, 4);
	CHECK_FIELD(hwsig_record, valid_mask, 24, 4);
	CHECK_FIELD(hwsig_record, config_generation, 28, 4);
	CHECK_FIELD(hwsig_record, values, 32, 16 * 8);
	CHECK_FIELD(hwsig_record, time_enabled, 160, 16 * 8);
	CHECK_FIELD(hwsig_record, time_running, 288, 16 * 8);
	CHECK_FIELD(hwsig_record, __reserved, 416, 11 * 8);
	CHECK_FIELD(hwsig_record, seq_end, 504, 8);
	// Every field is 8-byte aligned in pairs: the reader copies the record
	// as 64 aligned words.
	CHECK(alignof(hwsig_record) == 8);
}

TEST_CASE("hwsig numbering is stable", "[abi]")
{
	// Commands, attributes and flags are never renumbered (only retired).
	CHECK(HWSIG_CMD_GET_INFO == 1);
	CHECK(HWSIG_CMD_CONFIGURE == 2);
	CHECK(HWSIG_CMD_START == 3);
	CHECK(HWSIG_CMD_STOP == 4);
	CHECK(HWSIG_CMD_GET_STATUS == 5);
	CHECK(HWSIG_ATTR_PAD == 1);
	CHECK(HWSIG_ATTR_ABI_VERSION == 2);
	CHECK(HWSIG_ATTR_COMPAT_VERSION == 3);
	CHECK(HWSIG_ATTR_NR_CPU_IDS == 4);
	CHECK(HWSIG_ATTR_NR_ONLINE_CPUS == 5);
	CHECK(HWSIG_ATTR_RING_RECORDS == 6);
	CHECK(HWSIG_ATTR_RECORD_SIZE == 7);
	CHECK(HWSIG_ATTR_MMAP_SIZE == 8);
	CHECK(HWSIG_ATTR_SAMPLE_INTERVAL_NS == 9);
	CHECK(HWSIG_ATTR_MAX_EVENTS == 10);
	CHECK(HWSIG_ATTR_MIN_INTERVAL_NS == 11);
	CHECK(HWSIG_ATTR_MAX_INTERVAL_NS == 12);
	CHECK(HWSIG_ATTR_MAX_RING_RECORDS == 13);
	CHECK(HWSIG_ATTR_EVENTS == 14);
	CHECK(HWSIG_ATTR_EVENT == 15);
	CHECK(HWSIG_ATTR_RUNNING == 16);
	CHECK(HWSIG_ATTR_CONFIG_GENERATION == 17);
	CHECK(HWSIG_ATTR_SAMPLE_COST_AVG_NS == 18);
	CHECK(HWSIG_ATTR_SAMPLE_COST_MAX_NS == 19);
	CHECK(HWSIG_ATTR_RECORDS_WRITTEN == 20);
	CHECK(HWSIG_ATTR_RECORDS_OVERWRITTEN == 21);
	CHECK(HWSIG_ATTR_STATUS == 22);
	CHECK(HWSIG_ATTR_STATUS_ENTRY == 23);
	CHECK(HWSIG_EVENT_ATTR_NAME == 2);
	CHECK(HWSIG_EVENT_ATTR_PMU_TYPE == 3);
	CHECK(HWSIG_EVENT_ATTR_CONFIG == 4);
	CHECK(HWSIG_EVENT_ATTR_CONFIG1 == 5);
	CHECK(HWSIG_EVENT_ATTR_CONFIG2 == 6);
	CHECK(HWSIG_EVENT_ATTR_CPU == 7);
	CHECK(HWSIG_STATUS_ATTR_EVENT_INDEX == 2);
	CHECK(HWSIG_STATUS_ATTR_CPU == 3);
	CHECK(HWSIG_STATUS_ATTR_ERROR == 4);
	CHECK(HWSIG_STATUS_ATTR_TIME_ENABLED == 5);
	CHECK(HWSIG_STATUS_ATTR_TIME_RUNNING == 6);
	CHECK(HWSIG_STATUS_ATTR_VALUE == 7);
	CHECK(HWSIG_RECORD_F_FIRST == 1u);
}

TEST_CASE("hwsig_abi_compatible is the documented rule", "[abi]")
{
	CHECK(hwsig_abi_compatible(HWSIG_ABI_VERSION, HWSIG_ABI_COMPAT_VERSION));
	CHECK(hwsig_abi_compatible(HWSIG_ABI_VERSION + 5, HWSIG_ABI_VERSION)); // newer, keeps our layout
	CHECK_FALSE(hwsig_abi_compatible(HWSIG_ABI_VERSION + 5, HWSIG_ABI_VERSION + 1)); // dropped it
	CHECK_FALSE(hwsig_abi_compatible(HWSIG_ABI_COMPAT_VERSION - 1, 0)); // too old for us
}
