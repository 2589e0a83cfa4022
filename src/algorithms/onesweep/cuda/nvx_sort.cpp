// Onesweep with the CUDA pass through VK_NVX_binary_import (nvx_sort.hpp).
#include "algorithms/onesweep/cuda/nvx_sort.hpp"

#include "algorithms/onesweep/cuda/cuda_pass.hpp"
#include "algorithms/onesweep/cuda/params.hpp"
#include "algorithms/onesweep/onesweep_steps.hpp"
#include "cuda/environment.hpp"
#include "vulkan/context_impl.hpp"

namespace gpusort {

namespace {

class OnesweepNvx final : public OnesweepSteps {
 public:
  OnesweepNvx(Context::Impl& ctx, const SortSpec& spec, const OnesweepOptions& options,
              const cuda::CudaPassShape& shape, uint32_t function)
      : OnesweepSteps(ctx, spec, options), shape_(shape), function_(function) {
    // The histogram kernel: the v-th row of cuda::kCudaHistogramShapes for the key width.
    const CudaEnvironment environment = cuda_environment();
    const uint32_t variant = environment.histogram.value_or(tuning_.cuda_histogram);
    for (uint32_t row = 0, seen = 0; variant != 0 && row < cuda::kCudaHistogramShapeCount; ++row)
      if (cuda::kCudaHistogramShapes[row].key_words == spec.key_words && ++seen == variant)
        histogram_ = &cuda::kCudaHistogramShapes[row];
    if (variant != 0 && !histogram_)
      throw Error("onesweep: no CUDA histogram kernel " + std::to_string(variant) + " for " +
                  std::to_string(spec.key_words * 32) + "-bit keys");
    const uint32_t key_class = cuda::cuda_key_class(spec.key_words, spec.value_words);
    switches_.spin_limit = options_.spin_limit;
    switches_.refusal_period = options_.publish_refusal_period;
    switches_.prefetch_tiles =
        options_.cuda_prefetch_tiles >= 0
            ? uint32_t(options_.cuda_prefetch_tiles)
            : environment.prefetch_tiles.value_or(tuning_.cuda_prefetch_tiles[key_class]);
    // Tiles by id or from the pass's counter, per key class (the tuning table; the option wins).
    switches_.claim_by_id = options_.claim_by_id >= 0 ? uint32_t(options_.claim_by_id != 0)
                                                      : tuning_.cuda_tiles_by_id[key_class];
  }

  std::string pass_kernels() const override {
    return std::string("cuda ") + shape_.variant +
           (histogram_ ? std::string(histogram_->copies > 1 ? " +histogram c2" : " +histogram")
                       : "") +
           (switches_.prefetch_tiles != 0
                ? " +prefetch " + std::to_string(switches_.prefetch_tiles)
                : "") +
           (switches_.claim_by_id != 0 ? " +by id" : "");
  }

 protected:
  // The kernel's tile, fixed when it was built.
  uint32_t tile() const override { return shape_.threads * shape_.items; }
  // A sort is planned: the kernels load while the caller uploads.
  void planned() const override { start_loading_cuda_kernels(ctx_); }
  void check_runnable() const override {
    if (!cuda_kernels_loaded(ctx_))
      throw Error("the CUDA kernels (kernels=cuda) cannot run on " + ctx_.info.name + ": " +
                  ctx_.cuda_unavailable_why());
  }

  // The histogram and plan as one CUDA launch (HistogramAndPlan), where the table names a row; it
  // writes what onesweep_histogram.comp's plan does.
  void record_histogram(Recorder& rec, const SortTargets& t, const Steps& s) const override {
    if (!histogram_) return OnesweepSteps::record_histogram(rec, t, s);
    const cuda::OnesweepHistogramParams params = cuda::onesweep_histogram_params(
        spec_, s.layout, addresses(t), tile(), s.copy_groups, copy_workgroup,
        ctx_.info.max_workgroup_count_x);
    rec.cuda_launch(ctx_.nvx.functions.at(cuda::cuda_histogram_function(
                        uint32_t(histogram_ - cuda::kCudaHistogramShapes))),
                    cuda::onesweep_histogram_grid(*histogram_, t.n, ctx_.info.compute_units),
                    histogram_->threads, {&params});
  }

  // One CUDA launch per pass, its grid for max_n's tiles since a launch cannot be indirect:
  // blocks beyond the count's tiles, and every block of a skipped pass, return at once. The kernel
  // reads the plan word, the offsets, the counter and the table that the SPIR-V pass would.
  void record_passes(Recorder& rec, const SortTargets& t, const Steps& s,
                     const std::function<void(const OnesweepStages&)>& between) const override {
    if (between) throw Error("onesweep: a sort built on Onesweep's steps needs its SPIR-V pass");
    for (uint32_t pass = 0; pass < s.pass_count; ++pass) {
      const cuda::OnesweepPassParams params =
          cuda::onesweep_pass_params(spec_, s.layout, addresses(t), pass, switches_);
      rec.cuda_launch(ctx_.nvx.functions.at(function_), uint32_t(s.layout.tiles), shape_.threads,
                      {&params});
      step_barrier(rec, 1 + pass, false);
    }
  }

 private:
  static cuda::OnesweepAddresses addresses(const SortTargets& t) {
    return {.keys = t.keys, .values = t.values, .count = t.count_address, .scratch = t.scratch,
            .n = t.n};
  }

  const cuda::CudaPassShape& shape_;
  const uint32_t function_;  // in ctx_.nvx.functions
  // The histogram and plan as a CUDA kernel too (its row of cuda::kCudaHistogramShapes), or null.
  const cuda::CudaHistogramShape* histogram_ = nullptr;
  cuda::OnesweepPassSwitches switches_;
};

}  // namespace

std::unique_ptr<OnesweepSort> make_onesweep_nvx(Context::Impl& ctx, const SortSpec& spec,
                                                const OnesweepOptions& options,
                                                const cuda::CudaPassShape& shape,
                                                uint32_t function) {
  return std::make_unique<OnesweepNvx>(ctx, spec, options, shape, function);
}

}  // namespace gpusort
