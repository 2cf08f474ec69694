// OpenBLAS comparison path. Compiled always; links cblas only when binding.gyp's detection found it,
// so a machine without OpenBLAS builds the same addon minus this path.
#include "common/error.h"
#include "tensor/sgemm.h"

#ifdef TIMESHARE_HAVE_CBLAS
#include <cblas.h>
#endif

namespace ts {

#ifdef TIMESHARE_HAVE_CBLAS
bool blas_available() { return true; }
void blas_set_threads(int threads) { openblas_set_num_threads(threads); }
void blas_sgemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda,
              b, ldb, beta, c, ldc);
}
#else
bool blas_available() { return false; }
void blas_set_threads(int) {}
void blas_sgemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) {
  fail("BLAS_UNAVAILABLE", "this build did not find OpenBLAS (apt-get install -y libopenblas-dev, then rebuild)");
}
#endif

}  // namespace ts
