// The spin-up batches and the timed runs of a row on one CUDA stream, timed with events, enqueued
// without host waits (Protocol::spin_up, docs/design/benchmark-protocol.md): the GPU runs one batch
// while the host enqueues the next, and the timed runs follow the last batch with no gap. An event
// pair measures the stream's work between them, from the moment everything before the first had
// finished. `Events` is the CUDA API that times them: the runtime's for the baselines
// (cuda_batches.cuh), the driver's that the library opens for `gpusort bench` (cuda_face.cpp).
//   Events::Event, Events::Stream; create(Event&), destroy(Event), record(Event, Stream),
//   synchronize(Event), elapsed_ms(Event, Event) -> float, synchronize_stream(Stream), and
//   kName (the class's name in its errors).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort::bench {

template <class Events>
class EventBatches {
 public:
  using Event = typename Events::Event;
  using Stream = typename Events::Stream;

  EventBatches(Stream stream, uint32_t max_runs) : stream_(stream), runs_(2 * max_runs) {
    for (Event& e : batch_) Events::create(e);
    for (Event& e : runs_) Events::create(e);
  }
  ~EventBatches() {
    for (Event e : batch_)
      if (e) Events::destroy(e);
    for (Event e : runs_)
      if (e) Events::destroy(e);
  }
  EventBatches(const EventBatches&) = delete;
  EventBatches& operator=(const EventBatches&) = delete;

  // Protocol::spin_up's begin and finish.
  template <class SortOne>
  void begin_batch(uint32_t repeats, SortOne sort_one) {
    if (queued_ == 2)
      throw std::logic_error(std::string(Events::kName) + ": more than two batches queued");
    const uint32_t slot = (oldest_ + queued_) % 2;
    Events::record(batch_[2 * slot], stream_);
    for (uint32_t r = 0; r < repeats; ++r) sort_one();
    Events::record(batch_[2 * slot + 1], stream_);
    ++queued_;
  }
  double finish_batch() {
    if (queued_ == 0) throw std::logic_error(std::string(Events::kName) + ": no batch queued");
    const uint32_t slot = oldest_;
    oldest_ = (oldest_ + 1) % 2, --queued_;
    Events::synchronize(batch_[2 * slot + 1]);
    return Events::elapsed_ms(batch_[2 * slot], batch_[2 * slot + 1]);
  }
  uint32_t batches_queued() const { return queued_; }

  // Timed run r (r < max_runs): before() (untimed), run() between the events of r, then
  // after() (untimed).
  template <class Before, class Run, class After>
  void enqueue_run(uint32_t r, Before before, Run run, After after) {
    before();
    Events::record(runs_.at(2 * r), stream_);
    run();
    Events::record(runs_.at(2 * r + 1), stream_);
    after();
  }
  template <class Run>
  void enqueue_run(uint32_t r, Run run) {
    enqueue_run(r, [] {}, run, [] {});
  }
  // Waits for the stream; the ms of runs 0 .. count-1.
  std::vector<float> finish_runs(uint32_t count) {
    Events::synchronize_stream(stream_);
    std::vector<float> ms(count);
    for (uint32_t r = 0; r < count; ++r) ms[r] = Events::elapsed_ms(runs_.at(2 * r), runs_.at(2 * r + 1));
    return ms;
  }

 private:
  Stream stream_;
  Event batch_[4] = {};
  std::vector<Event> runs_;
  uint32_t oldest_ = 0, queued_ = 0;
};

}  // namespace gpusort::bench
