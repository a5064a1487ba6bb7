#pragma once
// The fast path's worker threads: started once, on the first call that asks for more threads
// than have been started, and kept for the process's life, so that a call pays a wake-up, not a
// thread's creation (on the AVX-512 Xeon VM, starting and joining one std::thread per call cost
// ~100 us: 64 tokens x 40 heads, ~84 us on one thread, took ~140 us on two). Idle workers
// poll for ~100 us before they sleep (workers.cpp, kPoll).
#include <functional>

namespace posenc::fast::detail {

// part(i) for every i in [0, parts): part(0) on the calling thread, the others on workers;
// returns when all have returned. The first exception a part throws is rethrown here, after
// every part has finished. Calls from several threads at once share the workers. A child made
// by fork() starts its own workers when it needs them (its parent's are not in it).
void run_parts(int parts, const std::function<void(int)>& part);

}  // namespace posenc::fast::detail
