#include "profile/profile.hpp"

#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "cc/dcqcn_params.hpp"
#include "fabric/network.hpp"

namespace lossless::profile {
namespace {

std::string ReadRepoFile(const std::string& rel) {
  std::ifstream in(std::string(LOSSLESS_SOURCE_DIR) + "/" + rel, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Profiles, NamesAreTheOneNamespaceOfDecisions) {
  const std::vector<std::string> want = {"cloud-shared", "ib-hdr",      "ib-ndr",    "ib-xdr",
                                         "roce-100g",    "roce-200g",   "roce-400g", "roce-800g",
                                         "roce-tuned",   "roce-untuned"};
  EXPECT_EQ(Names(), want);
}

TEST(Profiles, EmbeddedTextIsTheRepositoryFile) {
  for (const auto& name : Names()) {
    std::string text, path;
    ASSERT_TRUE(BuiltinText(name, &text, &path));
    EXPECT_EQ(path, "profiles/" + name + ".yaml");
    EXPECT_EQ(text, ReadRepoFile(path)) << path << ": rebuild to embed the edited file";
  }
}

// Every profile loads, validates and builds its default topology at 2, 4 and
// 16 nodes of 8 GPUs; its name is its file name.
TEST(Profiles, LoadAndBuildAtSeveralSizes) {
  for (const auto& name : Names()) {
    for (int64_t nodes : {2, 4, 16}) {
      SCOPED_TRACE(name + " x " + std::to_string(nodes));
      scenario::Scenario s = Load(name, nodes);
      EXPECT_EQ(s.name, name);
      EXPECT_FALSE(s.description.empty());
      EXPECT_TRUE(s.traffic.empty());
      EXPECT_EQ(s.clos.gpus, nodes * 8);
      topology::Topology t = scenario::BuildTopology(s);
      EXPECT_EQ(static_cast<int64_t>(t.hosts.size()), nodes * 8);
    }
  }
}

TEST(Profiles, MechanismsDifferWhereTheProfilesSay) {
  const scenario::Scenario ib = Load("ib-ndr", 4);
  EXPECT_TRUE(ib.net.ib.enabled);
  EXPECT_FALSE(ib.net.pfc.enabled);
  EXPECT_EQ(ib.topology_kind, "rail-optimized");
  EXPECT_EQ(ib.clos.radix, 64);
  const scenario::Scenario tuned = Load("roce-tuned", 4);
  const scenario::Scenario untuned = Load("roce-untuned", 4);
  EXPECT_TRUE(tuned.net.pfc.enabled);
  EXPECT_LT(tuned.net.sw.ecn[tuned.net.nic.data_class].kmin.count(), tuned.net.pfc.xoff.count());
  EXPECT_GE(untuned.net.sw.ecn[untuned.net.nic.data_class].kmin.count(),
            untuned.net.pfc.xoff.count());
  EXPECT_TRUE(tuned.warnings.empty());
  ASSERT_FALSE(untuned.warnings.empty());  // the ECN-above-PFC warning is the profile's point
  EXPECT_NE(untuned.warnings[0].find("fabric.ecn.kmin"), std::string::npos);
  EXPECT_EQ(tuned.clos.radix, untuned.clos.radix);  // same hardware
  const scenario::Scenario cloud = Load("cloud-shared", 16);
  EXPECT_EQ(cloud.topology_kind, "leaf-spine");
  EXPECT_GT(cloud.clos.oversubscription, 1.0);
  EXPECT_GT(cloud.shared.tenant_load, 0.0);
  EXPECT_EQ(cloud.cost_model, "cloud");
  EXPECT_EQ(ib.cost_model, "on-prem");
  topology::Topology t = scenario::BuildTopology(cloud);
  EXPECT_NE(t.description.find("3:1"), std::string::npos) << t.description;
}

// One namespace for fabrics: roce-400g is roce-tuned at 400G.
TEST(Profiles, Roce400gIsRoceTuned) {
  const scenario::Scenario a = Load("roce-400g", 4);
  const scenario::Scenario b = Load("roce-tuned", 4);
  ASSERT_EQ(a.resolved.size(), b.resolved.size());
  for (size_t i = 0; i < a.resolved.size(); ++i) {
    if (a.resolved[i].first == "name" || a.resolved[i].first == "description") continue;
    EXPECT_EQ(a.resolved[i], b.resolved[i]);
  }
  EXPECT_EQ(Load("roce-800g").clos.link_rate.gbps(), 800);
  EXPECT_EQ(Load("ib-xdr").clos.link_rate.gbps(), 800);
}

// roce-tuned carries the settings docs/compare.md#the-roce-tuned-settings-and-their-sources
// sources: ECN from 20-30 % of the PFC trigger (checklist check 2) with Kmax below it, the
// Spectrum-4 marking probability of 100 % (Cumulus Linux 5.14), and NVIDIA's documented
// ConnectX DCQCN defaults, which are the firmware preset with DCE_TCP_RTT = 1 us. The
// link-generation profiles at other rates are roce-tuned at that rate and carry the same.
TEST(Profiles, RoceTunedCarriesTheSourcedCongestionSettings) {
  cc::DcqcnParams nvidia = cc::DcqcnParams::ConnectXFirmware();
  nvidia.alpha_period = units::Time::Us(1);
  for (const char* name : {"roce-tuned", "roce-100g", "roce-200g", "roce-400g", "roce-800g"}) {
    const scenario::Scenario s = Load(name, 2);
    const fabric::EcnConfig& ecn = s.net.sw.ecn[s.net.nic.data_class];
    const int64_t xoff = s.net.pfc.xoff.count();
    EXPECT_TRUE(ecn.enabled) << name;
    EXPECT_GE(ecn.kmin.count() * 10, xoff * 2) << name;
    EXPECT_LE(ecn.kmin.count() * 10, xoff * 3) << name;
    EXPECT_LT(ecn.kmax.count(), xoff) << name;  // the audit's ecn.kmax-below-pfc
    EXPECT_EQ(ecn.pmax, 1.0) << name;
    ASSERT_TRUE(s.net.dcqcn) << name;
    const cc::DcqcnParams& p = s.net.dcqcn_params;
    EXPECT_EQ(p.variant, nvidia.variant) << name;
    EXPECT_EQ(p.cnp_interval, nvidia.cnp_interval) << name;
    EXPECT_EQ(p.cnp_mode, nvidia.cnp_mode) << name;
    EXPECT_EQ(p.g, nvidia.g) << name;
    EXPECT_EQ(p.alpha_period, units::Time::Us(1)) << name;
    EXPECT_EQ(p.initial_alpha, nvidia.initial_alpha) << name;
    EXPECT_EQ(p.rate_reduce_period, nvidia.rate_reduce_period) << name;
    EXPECT_EQ(p.min_dec_factor, nvidia.min_dec_factor) << name;
    EXPECT_EQ(p.clamp_target_rate, nvidia.clamp_target_rate) << name;
    EXPECT_EQ(p.clamp_target_rate_after_increase, nvidia.clamp_target_rate_after_increase)
        << name;
    EXPECT_EQ(p.rate_on_first_cnp, nvidia.rate_on_first_cnp) << name;
    EXPECT_EQ(p.rate_increase_period, nvidia.rate_increase_period) << name;
    EXPECT_EQ(p.byte_counter, nvidia.byte_counter) << name;
    EXPECT_EQ(p.fast_recovery_steps, nvidia.fast_recovery_steps) << name;
    EXPECT_EQ(p.rate_ai, nvidia.rate_ai) << name;
    EXPECT_EQ(p.rate_hai, nvidia.rate_hai) << name;
    EXPECT_EQ(p.hyper_increase, nvidia.hyper_increase) << name;
    EXPECT_EQ(p.min_rate, nvidia.min_rate) << name;
    EXPECT_EQ(p.max_rate, nvidia.max_rate) << name;
  }
}

// Every value in a profile names its source or says placeholder: each
// "key: value" line other than name and description carries a comment.
TEST(Profiles, EveryValueHasAComment) {
  static const std::regex kValue(R"(^\s*([a-z_]+):\s*([^#\s][^#]*?)\s*(#.*)?$)");
  for (const auto& name : Names()) {
    std::string text;
    BuiltinText(name, &text, nullptr);
    std::istringstream in(text);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      std::smatch m;
      if (!std::regex_match(line, m, kValue)) continue;
      if (m[1] == "name" || m[1] == "description") continue;
      EXPECT_TRUE(m[3].matched && m[3].length() > 3)
          << "profiles/" << name << ".yaml:" << line_no << ": " << line;
    }
  }
}

TEST(Profiles, UnknownNameListsTheValidOnes) {
  const std::string e = ErrorOf([] { Load("ib-nrd", 2); });
  EXPECT_EQ(e,
            "<cli>: --fabric: unknown profile \"ib-nrd\"; expected one of cloud-shared, ib-hdr, "
            "ib-ndr, ib-xdr, roce-100g, roce-200g, roce-400g, roce-800g, roce-tuned, "
            "roce-untuned, or a profile file (a path ending in .yaml) (did you mean 'ib-ndr'?)");
  EXPECT_EQ(ErrorOf([] { Load("no/such.yaml"); }),
            "no/such.yaml: cannot open: No such file or directory");
  EXPECT_EQ(ErrorOf([] { Load("ib-ndr", -1); }),
            "<cli>: --nodes: expected a node count of at least 1, got \"-1\"");
}

TEST(Profiles, FileErrorsNameTheProfileFileAndLine) {
  // A --set after the profile is validated like any scenario field.
  EXPECT_EQ(ErrorOf([] { Load("ib-ndr", 2, {"fabric.routing=fastest"}); }).substr(0, 33),
            "<--set>: fabric.routing: expected");
  // A size the radix cannot host names the node count as given (here as --set).
  EXPECT_EQ(ErrorOf([] { scenario::BuildTopology(Load("ib-ndr", 300)); }),
            "<--set>: topology.gpus: expected at most 2048 GPUs for a 2-tier non-blocking "
            "rail-optimized fabric of radix-64 switches with 8 GPUs per node, got 2400");
  // A file path loads like a built-in name.
  const scenario::Scenario s = Load(std::string(LOSSLESS_SOURCE_DIR) + "/profiles/ib-hdr.yaml", 2);
  EXPECT_EQ(s.name, "ib-hdr");
}

TEST(Profiles, ListSummarizesEveryProfile) {
  const std::vector<Summary> all = List();
  ASSERT_EQ(all.size(), Names().size());
  const Summary& ndr = all[2];
  EXPECT_EQ(ndr.name, "ib-ndr");
  EXPECT_EQ(ndr.link_rate, "400Gbps");
  EXPECT_EQ(ndr.lossless, "credits");
  EXPECT_EQ(ndr.routing, "adaptive");
  EXPECT_EQ(ndr.topology, "rail-optimized, radix 64, 8 GPUs/node");
  EXPECT_EQ(all[9].cc, "dcqcn-firmware");  // roce-untuned
  EXPECT_EQ(all[0].topology, "leaf-spine, radix 32, 3:1, 8 GPUs/node");
}

}  // namespace
}  // namespace lossless::profile
