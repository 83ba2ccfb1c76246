// RefE13_IncastOrdering in the fast tier: the slow test's incast
// (incast_e13_harness.hpp) on one seed, so that a DCQCN that stops acting on
// the senders (rates not applied to pacing, no CNPs, no marks) fails `make
// test`. The whole E13 pair of runs takes well under a second.
#include <gtest/gtest.h>

#include "testing/incast_e13_harness.hpp"

namespace lossless::fabric {
namespace {

TEST(RefE13_IncastOrdering, FastPfcOnlyVersusDcqcnSeed1) {
  const e13::E13Result pfc = e13::RunE13(false, 1);
  const e13::E13Result dcqcn = e13::RunE13(true, 1);
  e13::ExpectDcqcnBeatsPfcOnly(pfc, dcqcn);
}

}  // namespace
}  // namespace lossless::fabric
