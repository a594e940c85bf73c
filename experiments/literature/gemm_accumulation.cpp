#include "experiments/literature/gemm_accumulation.hpp"

#include <cmath>
#include <cstdio>

#include "experiments/literature/table_line.hpp"
#include "sim/gemm/gemm.hpp"
#include "sim/scaling/current.hpp"

namespace fp8lab::experiments::literature {
namespace {

struct Model {
  const char* label;
  const char* sim_name;  // sim::parse_accumulation's spelling
};
constexpr Model kModels[] = {{"fp32_seq", "fp32_seq"},
                             {"hopper_fast", "hopper_fast_accum"},
                             {"hopper_split", "hopper_split_accumulator"}};

// C = A B^T in float64 from the unquantized fp32 inputs.
std::vector<double> fp64_product(const OperandPair& p) {
  std::vector<double> c(static_cast<std::size_t>(p.rows_a * p.rows_b));
  for (std::int64_t m = 0; m < p.rows_a; ++m) {
    for (std::int64_t n = 0; n < p.rows_b; ++n) {
      double sum = 0;
      const float* a = &p.a[static_cast<std::size_t>(m * p.k)];
      const float* b = &p.b[static_cast<std::size_t>(n * p.k)];
      for (std::int64_t k = 0; k < p.k; ++k) sum += static_cast<double>(a[k]) * b[k];
      c[static_cast<std::size_t>(m * p.rows_b + n)] = sum;
    }
  }
  return c;
}

}  // namespace

ErrorMetrics error_metrics(const std::vector<float>& c, const std::vector<double>& reference) {
  double ref_squares = 0, diff_squares = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double d = static_cast<double>(c[i]) - reference[i];
    ref_squares += reference[i] * reference[i];
    diff_squares += d * d;
  }
  const double rms = std::sqrt(ref_squares / static_cast<double>(c.size()));
  ErrorMetrics out;
  out.frob = ref_squares > 0 ? std::sqrt(diff_squares / ref_squares) : 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (std::fabs(reference[i]) < kNearZeroFraction * rms) continue;
    const double diff = std::fabs(static_cast<double>(c[i]) - reference[i]);
    const double rel = diff / std::fabs(reference[i]);
    if (rel > out.max_rel) out.max_rel = rel;
  }
  return out;
}

std::vector<AccumulationRow> measure_accumulation(const AccumulationOptions& options) {
  std::vector<AccumulationRow> rows;
  for (const auto distribution : all_distributions()) {
    for (const auto k : options.ks) {
      const auto p = make_operands(distribution, options.rows, options.rows, k, options.seed);
      const auto qa = sim::scaling::quantize_current_te(p.a, p.rows_a, k, sim::Format::E4M3);
      const auto qb = sim::scaling::quantize_current_te(p.b, p.rows_b, k, sim::Format::E4M3);
      const sim::GemmOperand a{qa.tensor, sim::ReduceDim::kCols};
      const sim::GemmOperand b{qb.tensor, sim::ReduceDim::kCols};
      const auto exact = sim::gemm_exact(a, b, {}, options.threads);
      const auto fp64 = fp64_product(p);
      for (const auto& model : kModels) {
        sim::GemmOptions gemm_options;
        gemm_options.accumulation = sim::parse_accumulation(model.sim_name);
        gemm_options.threads = options.threads;
        const auto c = sim::gemm(a, b, gemm_options);
        const auto vs_exact = error_metrics(c, exact);
        const auto vs_fp64 = error_metrics(c, fp64);
        rows.push_back({distribution, k, model.label, vs_exact.max_rel, vs_exact.frob,
                        vs_fp64.max_rel, vs_fp64.frob});
      }
    }
  }
  return rows;
}

std::string format_accumulation_table(const std::vector<AccumulationRow>& rows) {
  using R = AccumulationRow;
  const auto percent = [](double R::*member) {
    return [member](const R& r) { return printed("%.4f%%", 100 * r.*member); };
  };
  return text_table<R>(
      {{-16, "inputs", [](const R& r) { return std::string(to_string(r.distribution)); }},
       {6, "K", [](const R& r) { return printed("%lld", static_cast<long long>(r.k)); }},
       {-13, "accumulation", [](const R& r) { return r.model; }},
       {13, "max rel exact", percent(&R::max_rel_vs_exact)},
       {13, "frob exact", percent(&R::frob_vs_exact)},
       {13, "max rel fp64", percent(&R::max_rel_vs_fp64)},
       {13, "frob fp64", percent(&R::frob_vs_fp64)}},
      rows);
}

}  // namespace fp8lab::experiments::literature
