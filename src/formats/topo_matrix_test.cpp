#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "base/error.hpp"
#include "formats/topo_matrix.hpp"
#include "testing/topo_matrix_fixtures.hpp"

namespace lossless::formats {
namespace {

using lossless::testing::ParseTopoFixture;
using lossless::testing::ParseTopoText;

void ExpectError(const std::string& name, int64_t line, const std::string& field,
                 const std::string& needle) {
  try {
    ParseTopoFixture(name);
    FAIL() << name;
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().field, field) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TopoMatrix, ParsesDgxLayoutWithLegendAndAffinity) {
  TopoMatrix m = ParseTopoFixture("dgx_h100_8gpu_8nic.txt");
  EXPECT_EQ(m.header_line, 1);
  ASSERT_EQ(m.devices.size(), 16u);
  EXPECT_EQ(m.Gpus().size(), 8u);
  EXPECT_EQ(m.Nics().size(), 8u);
  EXPECT_TRUE(m.nic_legend);
  EXPECT_EQ(m.devices[8].column, "NIC0");
  EXPECT_EQ(m.devices[8].name, "mlx5_0");
  EXPECT_EQ(m.devices[8].line, 10);
  EXPECT_EQ(m.devices[5].cpu_affinity, "48-95,144-191");
  EXPECT_EQ(m.devices[5].numa_affinity, "1");
  EXPECT_EQ(m.devices[5].gpu_numa_id, "N/A");
  EXPECT_EQ(m.cells[0][1].link, TopoLink::kNvLink);
  EXPECT_EQ(m.cells[0][1].nvlinks, 18);
  EXPECT_EQ(m.cells[0][8].link, TopoLink::kPix);
  EXPECT_EQ(m.cells[0][9].link, TopoLink::kNode);
  EXPECT_EQ(m.cells[0][12].link, TopoLink::kSys);
  EXPECT_EQ(m.cells[3][3].link, TopoLink::kSelf);
}

TEST(TopoMatrix, OldDriverAnsiHeaderAndNamedNicColumns) {
  TopoMatrix m = ParseTopoFixture("old_driver_named_nics.txt");
  ASSERT_EQ(m.devices.size(), 8u);
  EXPECT_FALSE(m.nic_legend);
  EXPECT_EQ(m.devices[4].kind, TopoDeviceKind::kNic);
  EXPECT_EQ(m.devices[4].name, "mlx5_0");
  EXPECT_EQ(m.devices[0].gpu_numa_id, "");
  EXPECT_EQ(m.cells[0][1].nvlinks, 12);
}

TEST(TopoMatrix, SpacesInsteadOfTabsAndWidths) {
  EXPECT_EQ(ParseTopoFixture("spaces_not_tabs.txt").devices.size(), 8u);
  EXPECT_EQ(ParseTopoFixture("two_gpu_no_nic.txt").devices.size(), 2u);
  EXPECT_EQ(ParseTopoFixture("shared_nics_4gpu_2nic.txt").devices.size(), 6u);
  TopoMatrix ten = ParseTopoFixture("ten_nics_bond.txt");
  EXPECT_EQ(ten.Nics().size(), 10u);
  EXPECT_EQ(ten.devices[17].name, "mlx5_bond_1");
}

TEST(TopoMatrix, SocIsTheOldNameOfSysAndCrlfIsFine) {
  TopoMatrix m = ParseTopoText(
      "\tGPU0\tGPU1\tCPU Affinity\r\nGPU0\t X \tSOC\t0-7\r\nGPU1\tSOC\t X \t8-15\r\n");
  EXPECT_EQ(m.cells[0][1].link, TopoLink::kSys);
  EXPECT_EQ(m.devices[1].cpu_affinity, "8-15");
}

TEST(TopoMatrixErrors, NameLineAndField) {
  ExpectError("bad_unknown_token.txt", 3, "GPU1/NIC1", "\"PXQ\"");
  ExpectError("bad_misaligned_row.txt", 4, "GPU2/NIC3", "misaligned");
  ExpectError("bad_diagonal.txt", 7, "NIC1/NIC1", "X on the diagonal");
  ExpectError("bad_asymmetric.txt", 7, "NIC1/GPU1", "not symmetric");
  ExpectError("bad_missing_row.txt", 5, "row", "row of GPU3");
  ExpectError("empty.txt", 1, "", "got an empty file");
}

TEST(TopoMatrixErrors, ForeignAndBinaryInput) {
  try {
    std::ifstream in(std::string(LOSSLESS_SOURCE_DIR) +
                     "/tests/fixtures/nccl/g2_allreduce_healthy.log");
    ParseTopoMatrix(in, "x");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 1);
    EXPECT_NE(std::string(e.what()).find("nccl-tests output"), std::string::npos);
  }
  EXPECT_THROW(ParseTopoText(std::string("\x7f"
                                         "ELF\0\0",
                                         6)),
               InputError);
  EXPECT_THROW(ParseTopoText("\tGPU0\tGPU1\nGPU0\t X \tNV4\n"), InputError);  // GPU1 row missing
  EXPECT_THROW(ParseTopoText("\tGPU0\tGPU1\nGPU0\t X \tNV4\tNV4\nGPU1\tNV4\t X \n"), InputError);
  EXPECT_THROW(
      ParseTopoText(
          "\tGPU0\tNIC0\nGPU0\t X \tPIX\nNIC0\tPIX\t X \n\nNIC Legend:\n\n  NIC7: mlx5_7\n"),
      InputError);
}

}  // namespace
}  // namespace lossless::formats
