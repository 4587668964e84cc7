// derive() for tests: the Interval, after checking what derive guarantees of
// every one (interval_conflicts: no (id, scope) with two values, two notes,
// or a value and a note). Every unit test that derives goes through here, so
// a contradiction in any interval fails the test that produced it.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "hwsig/derive.h"

inline hwsig::Interval checked_derive(const hwsig::Snapshot &prev, const hwsig::Snapshot &cur,
				      const std::vector<std::string> &claimed_ids)
{
	hwsig::Interval iv = hwsig::derive(prev, cur, claimed_ids);
	for (const auto &conflict : hwsig::interval_conflicts(iv))
		FAIL_CHECK("derive: " << conflict);
	return iv;
}

inline hwsig::Interval checked_summary(const hwsig::RunStart &start, const hwsig::Snapshot &last,
				       const std::vector<std::string> &claimed_ids)
{
	hwsig::Interval iv = hwsig::derive_summary(start, last, claimed_ids);
	for (const auto &conflict : hwsig::interval_conflicts(iv))
		FAIL_CHECK("derive_summary: " << conflict);
	return iv;
}
