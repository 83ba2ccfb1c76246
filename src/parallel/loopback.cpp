#include "parallel/loopback.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace lossless::parallel {
namespace {

struct Aborted : std::runtime_error {
  Aborted() : std::runtime_error("loopback: another rank ended with an exception") {}
};

// Shared by the ranks of one RunLoopback.
class Hub {
 public:
  explicit Hub(int size)
      : size_(size),
        slots_(static_cast<size_t>(size)),
        mail_(static_cast<size_t>(size) * static_cast<size_t>(size)) {}

  int size() const { return size_; }

  // One collective round: every rank deposits `bytes` and `value`; when the
  // last arrives, the round's results are fixed and everyone is released.
  // Returns the deposits in rank order and the minimum value.
  std::pair<std::vector<std::string>, int64_t> Round(int rank, std::string bytes, int64_t value) {
    std::unique_lock<std::mutex> lock(m_);
    if (aborted_) throw Aborted();
    slots_[static_cast<size_t>(rank)] = std::move(bytes);
    min_ = std::min(min_, value);
    const uint64_t gen = generation_;
    if (++arrived_ == size_) {
      results_ = std::move(slots_);
      slots_.assign(static_cast<size_t>(size_), {});
      result_min_ = min_;
      min_ = std::numeric_limits<int64_t>::max();
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
      if (generation_ == gen) throw Aborted();
    }
    // results_ stays valid until the next round completes, which needs this
    // rank to arrive again, after it has copied what it needs.
    return {results_, result_min_};
  }

  void Post(int from, int to, std::string bytes) {
    std::lock_guard<std::mutex> lock(m_);
    // A batch for a rank that has ended is never taken: harmless. Posting
    // goes on after another rank failed, so that the ranks still running
    // reach the point where they fail alike (a batch is not a barrier).
    mail_[Box(from, to)].push_back(std::move(bytes));
    cv_.notify_all();
  }

  std::string Take(int from, int to) {
    std::unique_lock<std::mutex> lock(m_);
    auto& box = mail_[Box(from, to)];
    // Only the sender's end can leave the box empty for good.
    cv_.wait(lock, [&] { return !box.empty() || ended_[static_cast<size_t>(from)]; });
    if (box.empty()) throw Aborted();
    std::string bytes = std::move(box.front());
    box.pop_front();
    return bytes;
  }

  // A rank failed: no collective can complete any more.
  void Abort() {
    std::lock_guard<std::mutex> lock(m_);
    aborted_ = true;
    cv_.notify_all();
  }
  // A rank's function returned or threw: it sends nothing more.
  void End(int rank) {
    std::lock_guard<std::mutex> lock(m_);
    ended_[static_cast<size_t>(rank)] = true;
    cv_.notify_all();
  }

 private:
  size_t Box(int from, int to) const {
    return static_cast<size_t>(from) * static_cast<size_t>(size_) + static_cast<size_t>(to);
  }

  const int size_;
  std::mutex m_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  std::vector<bool> ended_ = std::vector<bool>(static_cast<size_t>(size_), false);
  std::vector<std::string> slots_;
  std::vector<std::string> results_;
  int64_t min_ = std::numeric_limits<int64_t>::max();
  int64_t result_min_ = 0;
  std::vector<std::deque<std::string>> mail_;  // [from * size + to], FIFO per pair
};

class LoopbackComm final : public Comm {
 public:
  LoopbackComm(Hub& hub, int rank, uint64_t jitter_seed)
      : hub_(hub), rank_(rank), jitter_(jitter_seed) {
    if (jitter_ != 0) jitter_ ^= (static_cast<uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ULL;
  }
  int Rank() const override { return rank_; }
  int Size() const override { return hub_.size(); }
  void Barrier() override {
    Jitter();
    hub_.Round(rank_, {}, 0);
  }
  int64_t AllreduceMin(int64_t v) override {
    Jitter();
    return hub_.Round(rank_, {}, v).second;
  }
  void AllreduceMinLanes(int64_t* lanes, size_t n) override {
    Jitter();
    const auto all =
        hub_.Round(rank_, std::string(reinterpret_cast<const char*>(lanes), n * sizeof(int64_t)), 0)
            .first;
    for (const std::string& b : all) {
      if (b.size() != n * sizeof(int64_t))
        throw std::logic_error("AllreduceMinLanes: ranks passed different lane counts");
      for (size_t i = 0; i < n; ++i) {
        int64_t v = 0;
        std::memcpy(&v, b.data() + i * sizeof v, sizeof v);
        lanes[i] = std::min(lanes[i], v);
      }
    }
  }
  std::vector<std::string> Gather(const std::string& bytes) override {
    Jitter();
    auto all = hub_.Round(rank_, bytes, 0).first;
    if (rank_ != 0) return {};
    return all;
  }
  std::string Broadcast(const std::string& bytes) override {
    Jitter();
    auto all = hub_.Round(rank_, rank_ == 0 ? bytes : std::string(), 0).first;
    return all[0];
  }
  std::vector<std::string> Exchange(const std::vector<Outgoing>& out,
                                    const std::vector<int>& from) override {
    for (const auto& o : out) {
      if (o.peer < 0 || o.peer >= Size() || o.peer == rank_)
        throw std::logic_error("Exchange: peer out of range or this rank");
      Jitter();
      hub_.Post(rank_, o.peer, o.bytes);
    }
    std::vector<std::string> in;
    in.reserve(from.size());
    for (int p : from) {
      if (p < 0 || p >= Size() || p == rank_)
        throw std::logic_error("Exchange: source out of range or this rank");
      Jitter();
      in.push_back(hub_.Take(p, rank_));
    }
    return in;
  }

 private:
  // splitmix64 step; yields 0..63 times.
  void Jitter() {
    if (jitter_ == 0) return;
    jitter_ += 0x9E3779B97F4A7C15ULL;
    uint64_t z = jitter_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    for (uint64_t i = 0, n = z & 63; i < n; ++i) std::this_thread::yield();
  }

  Hub& hub_;
  const int rank_;
  uint64_t jitter_;
};

}  // namespace

void RunLoopback(int ranks, const std::function<void(Comm&)>& fn, const LoopbackOptions& options) {
  if (ranks < 1) throw std::invalid_argument("RunLoopback: at least one rank");
  Hub hub(ranks);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(ranks));
  std::vector<bool> was_abort(static_cast<size_t>(ranks), false);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      LoopbackComm comm(hub, r, options.jitter_seed);
      try {
        fn(comm);
      } catch (const Aborted&) {
        errors[static_cast<size_t>(r)] = std::current_exception();
        was_abort[static_cast<size_t>(r)] = true;
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
        hub.Abort();
      }
      hub.End(r);
    });
  }
  for (auto& t : threads) t.join();
  // The root cause first: the lowest rank that threw on its own.
  for (int r = 0; r < ranks; ++r)
    if (errors[static_cast<size_t>(r)] && !was_abort[static_cast<size_t>(r)])
      std::rethrow_exception(errors[static_cast<size_t>(r)]);
  for (int r = 0; r < ranks; ++r)
    if (errors[static_cast<size_t>(r)]) std::rethrow_exception(errors[static_cast<size_t>(r)]);
}

}  // namespace lossless::parallel
