// Decides at build time whether the addon links OpenBLAS's cblas_sgemm. Prints "1" or "0" for
// binding.gyp. CI machines have no OpenBLAS, so "0" must always build; TIMESHARE_NO_BLAS=1 forces it
// to verify exactly that on a machine that does have the library.
import { existsSync } from 'node:fs';

const forcedOff = process.env.TIMESHARE_NO_BLAS === '1';
const header = [
  '/usr/include/x86_64-linux-gnu/cblas.h',
  '/usr/include/cblas.h',
  '/usr/include/openblas/cblas.h',
];
const libs = [
  '/usr/lib/x86_64-linux-gnu/libopenblas.so',
  '/usr/lib/libopenblas.so',
  '/usr/lib64/libopenblas.so',
  '/usr/lib/aarch64-linux-gnu/libopenblas.so',
];
const found = header.some((p) => existsSync(p)) && libs.some((p) => existsSync(p));
process.stdout.write(!forcedOff && found ? '1' : '0');
