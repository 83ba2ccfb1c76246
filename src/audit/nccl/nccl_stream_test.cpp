// Streaming: a large log (128 MiB) produced on the fly by a streambuf, so
// neither the test nor the parser ever holds it. Peak RSS must not grow by
// more than a small bound while it is parsed.
#include <sys/resource.h>

#include <cstring>
#include <streambuf>
#include <string>

#include <gtest/gtest.h>

#include "audit/nccl/nccl_log.hpp"
#include "base/error.hpp"

namespace lossless::audit::nccl {
namespace {

// Produces `noise_lines` NCCL INFO lines, then one G2 table, then more noise.
class GeneratedLog : public std::streambuf {
 public:
  explicit GeneratedLog(int64_t noise_lines) : noise_lines_(noise_lines) {}
  int64_t bytes() const { return bytes_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    buf_.clear();
    while (buf_.size() < 60000 && step_ < 2 * noise_lines_ + 1) {
      if (step_ == noise_lines_) {
        buf_ += kTable;
      } else {
        buf_ += "node-a:4000";
        buf_ += std::to_string(step_ % 8);
        buf_ +=
            ":4012 [3] NCCL INFO Channel 07/0 : 3[3] -> 11[3] [send] via NET/IB/3/GDRDMA "
            "comm 0x55d0 nRanks 16\n";
      }
      ++step_;
    }
    if (buf_.empty()) return traits_type::eof();
    bytes_ += static_cast<int64_t>(buf_.size());
    setg(buf_.data(), buf_.data(), buf_.data() + buf_.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  static constexpr const char* kTable =
      "# Collective test starting: all_reduce_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "  1073741824     268435456     float     sum      -1    23811   45.09   67.64      0    "
      "23796   45.12   67.68      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 67.66 \n";
  int64_t noise_lines_;
  int64_t step_ = 0;
  int64_t bytes_ = 0;
  std::string buf_;
};

int64_t PeakRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(NcclStream, LargeGeneratedLogParsesInBoundedMemory) {
  const int64_t noise = 700'000;  // ~2 x 700k lines of ~95 bytes = ~128 MiB
  GeneratedLog gen(noise);
  std::istream in(&gen);
  int64_t before = PeakRssKiB();
  std::vector<NcclRun> runs;
  int64_t n = StreamNcclLog(in, "gen.log", [&](NcclRun&& r) { runs.push_back(std::move(r)); });
  int64_t after = PeakRssKiB();
  EXPECT_GT(gen.bytes(), 120LL << 20);
  ASSERT_EQ(n, 1);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].first_line, noise + 1);
  ASSERT_EQ(runs[0].rows.size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0].rows[0].in_place.busbw_gbs, 67.68);
  // Holding the input would need > 120 MiB; allow 16 MiB for allocator noise.
  EXPECT_LT(after - before, 16 * 1024) << "peak RSS grew by " << (after - before) << " KiB";
}

// An endless run of NUL bytes (`audit nccl /dev/zero`): its first line never
// ends, so the binary check must come from the first block, not from a line.
class Zeros : public std::streambuf {
 public:
  int64_t bytes() const { return bytes_; }

 protected:
  int_type underflow() override {
    if (bytes_ >= (int64_t{8} << 20)) return traits_type::eof();  // stands for "never ends"
    bytes_ += static_cast<int64_t>(sizeof(buf_));
    setg(buf_, buf_, buf_ + sizeof(buf_));
    return traits_type::to_int_type(*gptr());
  }

 private:
  char buf_[4096] = {};
  int64_t bytes_ = 0;
};

TEST(NcclStream, EndlessBinaryInputIsRefusedAtTheFirstBlock) {
  Zeros zeros;
  std::istream in(&zeros);
  try {
    StreamNcclLog(in, "/dev/zero", [](NcclRun&&) {});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/dev/zero:1: binary data (NUL byte): expected an nccl-tests log");
  }
  EXPECT_LE(zeros.bytes(), 64 << 10);
}

}  // namespace
}  // namespace lossless::audit::nccl
