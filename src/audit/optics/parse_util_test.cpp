#include "audit/optics/parse_util.hpp"

#include <gtest/gtest.h>

namespace lossless::audit::optics {
namespace {

TEST(HeaderDevice, PromptsCommandsAndDecoratedHeaders) {
  EXPECT_EQ(HeaderDevice("root@node1:~# ethtool -m ens1f0"), "ens1f0");
  EXPECT_EQ(HeaderDevice("cumulus@leaf01:mgmt:~$ sudo ethtool -m swp1"), "swp1");
  EXPECT_EQ(HeaderDevice("$ mlxlink -d mlx5_0 -p 1 -m -c"), "mlx5_0/p1");
  EXPECT_EQ(HeaderDevice("ethtool -m enp134s0f0"), "enp134s0f0");
  EXPECT_EQ(HeaderDevice("RP/0/RP0/CPU0:ios#show controllers optics 0/0/1/2"), "0/0/1/2");
  EXPECT_EQ(HeaderDevice("admin@sonic:~$ show interfaces transceiver eeprom --dom"), "");
  EXPECT_EQ(HeaderDevice("==== mlx5_1 ===="), "mlx5_1");
  EXPECT_EQ(HeaderDevice("---- /dev/mst/mt4123_pciconf0 ----"), "mt4123_pciconf0");
  // Not headers: content, prose, rules, a shebang.
  EXPECT_FALSE(HeaderDevice("\tIdentifier : 0x03 (SFP)").has_value());
  EXPECT_FALSE(HeaderDevice("show me the module").has_value());
  EXPECT_FALSE(HeaderDevice("----------------").has_value());
  EXPECT_FALSE(HeaderDevice("#!/bin/bash").has_value());
}

TEST(StripPastePrefix, HashPrefixedContent) {
  EXPECT_EQ(StripPastePrefix("#\tIdentifier : 0x03 (SFP)"), "Identifier : 0x03 (SFP)");
  EXPECT_EQ(StripPastePrefix("## Module voltage : 3.3 V"), "Module voltage : 3.3 V");
  EXPECT_EQ(StripPastePrefix("#!/bin/bash"), "#!/bin/bash");
  EXPECT_EQ(StripPastePrefix("  Vendor name : X"), "Vendor name : X");
}

}  // namespace
}  // namespace lossless::audit::optics
