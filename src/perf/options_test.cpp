#include "perf/options.hpp"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "base/error.hpp"

namespace lossless::perf {
namespace {

PerfOptions Parse(std::vector<std::string> args) {
  return ParsePerfArgs(args);
}

// The InputError's field for bad `args`, or "" when parsing succeeds.
std::string ErrorField(std::vector<std::string> args) {
  try {
    ParsePerfArgs(args);
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "<cli>");
    return e.where().field;
  }
  return "";
}

TEST(PerfOptions, DefaultsAreNcclTests) {
  PerfOptions o = Parse({"all_reduce"});
  EXPECT_EQ(o.collective, collective::Collective::kAllReduce);
  EXPECT_EQ(o.min_bytes, 32 << 20);
  EXPECT_EQ(o.max_bytes, 32 << 20);
  EXPECT_EQ(o.step_bytes, 1 << 20);
  EXPECT_EQ(o.step_factor, 1);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.warmup_iters, 1);
  EXPECT_EQ(o.check, 1);
  EXPECT_EQ(o.root, 0);
  EXPECT_EQ(o.average, 1);
  EXPECT_EQ(o.types, std::vector<collective::DataType>{collective::DataType::kFloat});
  EXPECT_EQ(o.ops, std::vector<collective::RedOp>{collective::RedOp::kSum});
  EXPECT_EQ(o.format, OutputFormat::kG3);
  EXPECT_EQ(o.Ranks(), 1);
}

TEST(PerfOptions, ShortLongAttachedAndSeparateValues) {
  PerfOptions o = Parse({"-b8",     "-e",     "128M",     "--stepfactor=2",
                         "--ngpus", "8",      "-t2",      "all_gather",
                         "--nodes", "4",      "-d",       "half",
                         "-o",      "all",    "--format", "g2",
                         "--model", "--json", "out.json", "--fabric",
                         "ib-ndr",  "-n",     "0x10"});
  EXPECT_EQ(o.collective, collective::Collective::kAllGather);
  EXPECT_EQ(o.min_bytes, 8);
  EXPECT_EQ(o.max_bytes, 128 << 20);
  EXPECT_EQ(o.step_factor, 2);
  EXPECT_EQ(o.GpusPerNode(), 16);
  EXPECT_EQ(o.Ranks(), 64);
  EXPECT_EQ(o.types, std::vector<collective::DataType>{collective::DataType::kHalf});
  EXPECT_EQ(o.ops.size(), 6u);
  EXPECT_EQ(o.format, OutputFormat::kG2);
  EXPECT_TRUE(o.model);
  EXPECT_EQ(o.json, "out.json");
  EXPECT_EQ(o.fabric, "ib-ndr");
  EXPECT_EQ(o.iters, 16);
  EXPECT_EQ(Parse({"broadcast", "-d", "all"}).types.size(), 12u);
  EXPECT_EQ(Parse({"sendrecv_perf"}).collective, collective::Collective::kSendRecv);
}

TEST(PerfOptions, SizesAsParsesize) {
  EXPECT_EQ(ParseSize("1K"), 1024);
  EXPECT_EQ(ParseSize("1k"), 1024);
  EXPECT_EQ(ParseSize("0.5G"), int64_t{1} << 29);
  EXPECT_EQ(ParseSize("1 M"), 1 << 20);
  EXPECT_EQ(ParseSize("1.5"), 1);
  EXPECT_EQ(ParseSize("8"), 8);
  EXPECT_EQ(ParseSize("1T"), std::nullopt);
  EXPECT_EQ(ParseSize("1KB"), std::nullopt);
  EXPECT_EQ(ParseSize("-1"), std::nullopt);
  EXPECT_EQ(ParseSize("x"), std::nullopt);
  EXPECT_EQ(ParseSize("nan"), std::nullopt);
  EXPECT_EQ(ParseSize(""), std::nullopt);
  EXPECT_EQ(ParseSize("9e30"), std::nullopt);
}

TEST(PerfOptions, BadInputNamesTheFlag) {
  EXPECT_EQ(ErrorField({"all_reduc"}), "collective");
  EXPECT_EQ(ErrorField({"gather"}), "collective");  // not modelled
  EXPECT_EQ(ErrorField({"all_reduce", "broadcast"}), "collective");
  EXPECT_EQ(ErrorField({"all_reduce", "-d", "float32"}), "-d");
  EXPECT_EQ(ErrorField({"all_reduce", "--op", "add"}), "--op");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "1G", "-e", "1M"}), "-b");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "1025", "-e", "1024"}), "-b");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "1024", "-e", "1024"}), "");
  EXPECT_EQ(ErrorField({"all_reduce", "-f", "1", "-i", "0"}), "-f");
  EXPECT_EQ(ErrorField({"all_reduce", "-f", "0", "-i", "0", "-b", "8", "-e", "8"}), "-f");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "0", "-f", "2"}), "-b");
  EXPECT_EQ(ErrorField({"all_reduce", "-f", "-2"}), "-f");
  EXPECT_EQ(ErrorField({"all_reduce", "-g", "0"}), "-g");
  EXPECT_EQ(ErrorField({"all_reduce", "-t", "0"}), "-t");
  EXPECT_EQ(ErrorField({"all_reduce", "--nodes", "0"}), "--nodes");
  EXPECT_EQ(ErrorField({"all_reduce", "--nodes=-3"}), "--nodes");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "12X"}), "-b");
  EXPECT_EQ(ErrorField({"all_reduce", "-e"}), "-e");
  EXPECT_EQ(ErrorField({"all_reduce", "-n", "ten"}), "-n");
  EXPECT_EQ(ErrorField({"all_reduce", "-N", "0"}), "-N");
  EXPECT_EQ(ErrorField({"all_reduce", "-z", "4"}), "-z");
  EXPECT_EQ(ErrorField({"all_reduce", "--format", "g1"}), "--format");
  EXPECT_EQ(ErrorField({"all_reduce", "-J", "out.txt"}), "-J");
  EXPECT_EQ(ErrorField({"all_reduce", "-D", "1"}), "-D");
  EXPECT_EQ(ErrorField({"broadcast", "-g", "4", "-r", "4"}), "-r");
  EXPECT_EQ(ErrorField({"all_reduce", "--model=1"}), "--model");
  EXPECT_EQ(ErrorField({"all_reduce", "--fabric="}), "--fabric");
  EXPECT_EQ(ErrorField({"all_reduce", "-q", "1"}), "-q");
  EXPECT_EQ(ErrorField({"all_reduce", "-K", "2"}), "-K");  // needs -I 1
  EXPECT_EQ(ErrorField({"all_reduce", "-I", "1", "-K", "20"}), "-K");
  EXPECT_EQ(ErrorField({"all_reduce", "-I", "1", "--format", "g2"}), "-I");
  EXPECT_EQ(ErrorField({"all_reduce", "-S", "1"}), "-S");
  EXPECT_EQ(ErrorField({"all_reduce", "-M", "1"}), "-M");
  EXPECT_EQ(ErrorField({"all_reduce", "-I", "1", "-K", "19"}), "");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "1M", "-e", "8M", "-f", "2"}), "");
  try {
    Parse({"all_reduce", "--minbyte", "8"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("did you mean '--minbytes'"), std::string::npos) << e.message();
  }
  // -h skips validation.
  EXPECT_TRUE(Parse({"-h", "-b", "1G", "-e", "1M"}).help);
}

// --algo ring|tree in any case, as NCCL_ALGO spells it; Tree is
// all_reduce's only, whichever side of the collective's name the flag is.
TEST(PerfOptions, AlgoIsRingOrTreeForAllReduce) {
  EXPECT_EQ(Parse({"all_reduce"}).algo, "");
  EXPECT_EQ(Parse({"all_reduce", "--algo", "Tree"}).algo, "tree");
  EXPECT_EQ(Parse({"--algo=RING", "broadcast"}).algo, "ring");
  EXPECT_EQ(ErrorField({"all_reduce", "--algo", "NVLS"}), "--algo");
  EXPECT_EQ(ErrorField({"broadcast", "--algo", "tree"}), "--algo");
  EXPECT_EQ(ErrorField({"--algo", "tree", "alltoall"}), "--algo");
  PerfOptions o = Parse({"reduce"});
  try {
    SetAlgo(o, "Tree", {"<env>", 0, "NCCL_ALGO"});
    ADD_FAILURE() << "Tree accepted for reduce";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().field, "NCCL_ALGO");
  }
}

TEST(PerfOptions, RootsPerCollective) {
  EXPECT_EQ(Parse({"all_reduce", "-g", "4"}).Roots(), std::vector<int64_t>{-1});
  EXPECT_EQ(Parse({"reduce", "-g", "4", "-r", "2"}).Roots(), std::vector<int64_t>{2});
  EXPECT_EQ(Parse({"broadcast", "-g", "3", "-r", "-1"}).Roots(), (std::vector<int64_t>{0, 1, 2}));
}

TEST(PerfOptions, SizeLoopFactorAndIncrement) {
  EXPECT_EQ(SizeSequence(Parse({"all_reduce", "-b", "1M", "-e", "1G", "-f", "4"})),
            (std::vector<int64_t>{1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30}));
  // -f wins over -i when > 1; the last size is the largest reached that is <= max.
  EXPECT_EQ(SizeSequence(Parse({"all_reduce", "-b", "3", "-e", "100", "-f", "3", "-i", "7"})),
            (std::vector<int64_t>{3, 9, 27, 81}));
  // -b 1G -i 2G -e 25G: 1, 3, ..., 25 GiB.
  auto add = SizeSequence(Parse({"all_reduce", "-b", "1G", "-i", "2G", "-e", "25G"}));
  ASSERT_EQ(add.size(), 13u);
  EXPECT_EQ(add.front(), int64_t{1} << 30);
  EXPECT_EQ(add.back(), int64_t{25} << 30);
  // Default: one size, 32 MiB.
  EXPECT_EQ(SizeSequence(Parse({"all_reduce"})), std::vector<int64_t>{32 << 20});
  // SizeCount agrees with the sequence; huge sweeps are bad input.
  for (auto args : std::vector<std::vector<std::string>>{
           {"all_reduce", "-b", "3", "-e", "100", "-f", "3"},
           {"all_reduce", "-b", "1G", "-i", "2G", "-e", "25G"},
           {"all_reduce", "-b", "8", "-e", "8G", "-f", "2"},
           {"all_reduce", "-b", "8", "-e", "7", "-i", "1", "-b", "7"}}) {
    PerfOptions o = Parse(args);
    EXPECT_EQ(SizeCount(o), static_cast<int64_t>(SizeSequence(o).size()));
  }
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "1", "-e", "1G", "-i", "1"}), "-i");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "1", "-e", "100000", "-i", "1"}), "");
  EXPECT_EQ(ErrorField({"all_reduce", "-b", "1", "-e", "100001", "-i", "1"}), "-i");
  // No overflow near the top of the range.
  auto big = SizeSequence(Parse({"all_reduce", "-b", "1G", "-e", "4000000000G", "-f", "1000"}));
  EXPECT_EQ(big.size(), 4u);
}

TEST(PerfOptions, UsageMentionsEveryFlagGroup) {
  const std::string u = PerfUsage();
  for (const char* s :
       {"-b,--minbytes", "-f,--stepfactor", "--nodes", "--format", "--model", "--json"}) {
    EXPECT_NE(u.find(s), std::string::npos) << s;
  }
}

// --proto and NCCL_PROTO take NCCL's list syntax (names in any case, '^'
// to exclude) and store NCCL's spelling; the channel and buffer variables
// take integers in range; anything else is bad input naming the variable.
TEST(PerfOptions, ProtocolsAndNcclEnvironment) {
  EXPECT_EQ(Parse({"all_reduce", "--proto", "ll128"}).proto, "LL128");
  EXPECT_EQ(Parse({"all_reduce", "--proto", "^ll, simple"}).proto, "^LL,Simple");
  EXPECT_EQ(ErrorField({"all_reduce", "--proto", "LL256"}), "--proto");
  EXPECT_EQ(ErrorField({"all_reduce", "--proto", ""}), "--proto");
  auto env = [](std::map<std::string, std::string> vars) {
    PerfOptions o = Parse({"all_reduce"});
    ApplyNcclEnv(o, [&vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
    return o;
  };
  auto env_error = [&env](std::map<std::string, std::string> vars) -> std::string {
    try {
      env(std::move(vars));
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, "<env>");
      return e.where().field;
    }
    return "";
  };
  const PerfOptions o = env({{"NCCL_PROTO", "LL"},
                             {"NCCL_ALGO", "tree"},
                             {"NCCL_MIN_NCHANNELS", "2"},
                             {"NCCL_MAX_NCHANNELS", "4"},
                             {"NCCL_BUFFSIZE", "8388608"}});
  EXPECT_EQ(o.proto, "LL");
  EXPECT_EQ(o.algo, "tree");
  EXPECT_EQ(o.min_channels, 2);
  EXPECT_EQ(o.max_channels, 4);
  EXPECT_EQ(o.buffsize, int64_t{8} << 20);
  EXPECT_EQ(env({}).buffsize, int64_t{4} << 20);
  EXPECT_EQ(env_error({{"NCCL_PROTO", "LL129"}}), "NCCL_PROTO");
  EXPECT_EQ(env_error({{"NCCL_MAX_NCHANNELS", "0"}}), "NCCL_MAX_NCHANNELS");
  EXPECT_EQ(env_error({{"NCCL_MIN_NCHANNELS", "lots"}}), "NCCL_MIN_NCHANNELS");
  EXPECT_EQ(env_error({{"NCCL_BUFFSIZE", "1000"}}), "NCCL_BUFFSIZE");
  EXPECT_EQ(env_error({{"NCCL_BUFFSIZE", "4194305"}}), "NCCL_BUFFSIZE");
  // --proto wins over NCCL_PROTO.
  PerfOptions flag = Parse({"all_reduce", "--proto", "Simple"});
  ApplyNcclEnv(flag, [](const char* name) -> const char* {
    return std::string(name) == "NCCL_PROTO" ? "LL" : nullptr;
  });
  EXPECT_EQ(flag.proto, "Simple");
  // --qps as NCCL_IB_QPS_PER_CONNECTION, and it wins over it.
  EXPECT_EQ(env({{"NCCL_IB_QPS_PER_CONNECTION", "2"}}).qps_per_connection, 2);
  EXPECT_EQ(env({}).qps_per_connection, -1);
  EXPECT_EQ(ErrorField({"all_reduce", "--qps", "0"}), "--qps");
  EXPECT_EQ(ErrorField({"all_reduce", "--qps", "129"}), "--qps");
  PerfOptions qps = Parse({"all_reduce", "--qps", "4"});
  ApplyNcclEnv(qps, [](const char* name) -> const char* {
    return std::string(name) == "NCCL_IB_QPS_PER_CONNECTION" ? "2" : nullptr;
  });
  EXPECT_EQ(qps.qps_per_connection, 4);
}

}  // namespace
}  // namespace lossless::perf
