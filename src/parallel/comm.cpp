#include "parallel/comm.hpp"

#include <stdexcept>

namespace lossless::parallel {

void Comm::AllreduceMinLanes(int64_t* lanes, size_t n) {
  for (size_t i = 0; i < n; ++i) lanes[i] = AllreduceMin(lanes[i]);
}

void RunAgreed(Comm& comm, const std::function<void()>& fn) {
  std::string error;
  try {
    fn();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "error";
  }
  const std::vector<std::string> all = comm.Gather(error);
  std::string first;
  for (size_t r = 0; r < all.size() && first.empty(); ++r) {
    if (all[r].empty()) continue;
    first = r == 0 ? all[r] : "rank " + std::to_string(r) + ": " + all[r];
  }
  first = comm.Broadcast(first);
  if (!first.empty()) throw RankError(first);
}

void Comm::ExchangeInto(const std::vector<Outgoing>& out, const std::vector<int>& from,
                        std::vector<std::string>& in) {
  in = Exchange(out, from);
}

std::vector<std::string> SerialComm::Exchange(const std::vector<Outgoing>& out,
                                              const std::vector<int>& from) {
  if (!out.empty() || !from.empty())
    throw std::logic_error("SerialComm::Exchange: a single rank has no peers");
  return {};
}

}  // namespace lossless::parallel
