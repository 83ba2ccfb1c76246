#pragma once
// Test helpers of the QoS readers' tests (src/audit/qos/qos_parse*_test.cpp):
// configs from tests/fixtures/qos/, a port by name, and the error location of
// text that must not parse (tests only).
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "audit/qos/qos_parse.hpp"
#include "base/error.hpp"

namespace lossless::testing {

inline std::string Fixture(const std::string& name) {
  return std::string(LOSSLESS_SOURCE_DIR) + "/tests/fixtures/qos/" + name;
}

inline audit::qos::QosConfig Load(const std::string& name) {
  std::ifstream in(Fixture(name), std::ios::binary);
  EXPECT_TRUE(in) << name;
  return audit::qos::ParseQosConfig(in, name);
}

inline const audit::qos::PortQos& PortNamed(const audit::qos::QosConfig& c,
                                            const std::string& name) {
  for (const audit::qos::PortQos& p : c.ports)
    if (p.name == name) return p;
  throw std::runtime_error("no port " + name);
}

// Error location of parsing `text`; fails the test if it parses.
inline Location ErrorOf(const std::string& text, const std::string& file = "x.txt") {
  try {
    audit::qos::ParseQosText(text, file);
  } catch (const InputError& e) {
    return e.where();
  }
  ADD_FAILURE() << "parsed without error";
  return {};
}

}  // namespace lossless::testing
