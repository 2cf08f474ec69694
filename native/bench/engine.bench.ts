// npm run bench:engine — every figure beside a baseline measured in the same run:
//   sgemm on the model's shapes: ours vs OpenBLAS cblas_sgemm (when the build found it);
//   generation and training tokens/s for three model sizes: ours vs the same engine on OpenBLAS's
//   gemm, with the PyTorch figures of DESIGN §6 (2 threads, batch 512 x 10 tokens) as reference;
//   weight publication and offload/onload GB/s vs plain memcpy of the same bytes.
import {
  benchCopy,
  benchGemm,
  buildInfo,
  createEngine,
  type CreateEngineOptions,
  type Engine,
} from '../index.js';

const threads = 2;
const build = buildInfo();
const hint =
  'OpenBLAS not found at build time: apt-get install -y libopenblas-dev && npm ci (or node-gyp rebuild)';
const f1 = (x: number) => x.toFixed(1);
const k = (x: number) => `${(x / 1000).toFixed(1)}k`;

console.log(
  `timeshare engine bench: ${threads} threads, kernel ${build.kernel}, OpenBLAS ${build.blas ? 'yes' : 'no'}\n`,
);

// 1. sgemm on the tiny model's training shapes (batch 512 x 10 tokens = 5120 rows, d 128).
console.log('sgemm GFLOP/s (shape: M x N x K)          ours   OpenBLAS   ours/OpenBLAS');
const shapes: { label: string; m: number; n: number; k: number; transA?: boolean; transB?: boolean }[] = [
  { label: 'qkv forward   5120x384x128', m: 5120, n: 384, k: 128 },
  { label: 'mlp up        5120x512x128', m: 5120, n: 512, k: 128 },
  { label: 'mlp dX (NT)   5120x128x512', m: 5120, n: 128, k: 512, transB: true },
  { label: 'qkv dW (TN)   128x384x5120', m: 128, n: 384, k: 5120, transA: true },
  { label: 'decode step   512x384x128 ', m: 512, n: 384, k: 128 },
];
for (const s of shapes) {
  let ours = 0;
  let blas = 0;
  for (let rep = 0; rep < 3; rep++) {
    ours = Math.max(ours, await benchGemm({ ...s, threads, seconds: 0.15 }));
    if (build.blas) blas = Math.max(blas, await benchGemm({ ...s, threads, seconds: 0.15, kernel: 'blas' }));
  }
  if (build.blas) {
    console.log(
      `  ${s.label}   ${f1(ours).padStart(6)}   ${f1(blas).padStart(8)}   ${f1((100 * ours) / blas).padStart(8)}%`,
    );
  } else {
    console.log(`  ${s.label}   ${f1(ours).padStart(6)}        n/a   (${hint})`);
  }
}

// 2. End-to-end generation and training throughput.
const pytorch: Record<string, { train: number; gen: number }> = {
  '64x2': { train: 77_800, gen: 68_000 },
  '128x2 (tiny)': { train: 27_200, gen: 28_400 },
  '256x2 (small)': { train: 10_800, gen: 12_900 },
};
const sizes: [string, CreateEngineOptions['model']][] = [
  ['64x2', { dModel: 64, layers: 2, heads: 4 }],
  ['128x2 (tiny)', { preset: 'tiny' }],
  ['256x2 (small)', { preset: 'small' }],
];

async function throughput(engine: Engine) {
  const { padToken } = await engine.info();
  // 512 sequences of 6 prompt + 4 new tokens, never stopping early, as in the PyTorch measurement.
  const gen = { numPrompts: 64, groupSize: 8, maxNewTokens: 4, stopToken: padToken };
  const r = await engine.generate(gen);
  await engine.train({ rollouts: r });
  let genRate = 0;
  let trainRate = 0;
  for (let i = 0; i < 6; i++) {
    const g = await engine.generate(gen);
    genRate = Math.max(genRate, g.newTokens / g.profile.seconds);
    const t = await engine.train({ rollouts: r, lr: 0 });
    trainRate = Math.max(trainRate, t.tokens / t.profile.seconds);
  }
  return { genRate, trainRate, batchTokens: r.batch * r.length };
}

console.log(
  '\ntokens/s (512 seqs x 10 tokens)   generate: ours / on OpenBLAS / PyTorch    train: ours / on OpenBLAS / PyTorch',
);
for (const [label, model] of sizes) {
  const mk = (gemm: 'own' | 'blas') =>
    createEngine({ device: { threads, gemm }, model, task: { name: 'addition', digits: 2 }, seed: 1 });
  const own = mk('own');
  const ours = await throughput(own);
  await own.close();
  let blas: { genRate: number; trainRate: number } | undefined;
  if (build.blas) {
    const b = mk('blas');
    blas = await throughput(b);
    await b.close();
  }
  const ref = pytorch[label]!;
  const cell = (x?: number) => (x === undefined ? 'n/a' : k(x)).padStart(7);
  console.log(
    `  ${label.padEnd(14)}  ${cell(ours.genRate)} / ${cell(blas?.genRate)} / ${cell(ref.gen)}        ` +
      `${cell(ours.trainRate)} / ${cell(blas?.trainRate)} / ${cell(ref.train)}`,
  );
}
if (!build.blas) console.log(`  (OpenBLAS column: ${hint})`);

// 3. Bandwidth: weight publication and offload/onload of a ~100 MB model vs memcpy of the same bytes.
const big = createEngine({
  device: { threads, memoryBytes: 2 * 2 ** 30 },
  model: { dModel: 512, layers: 8, heads: 8 },
  task: { name: 'addition', digits: 2 },
  seed: 1,
});
const info = await big.info();
const weightBytes = info.parameters * 4;
const name = `/timeshare-bench-${process.pid}`;
// Two publishes touch both slots of the double buffer once, so the timed ones see warm pages.
await big.publishWeights(name);
await big.publishWeights(name);
let publishGBps = 0;
const copy = { memcpyGBps: 0, parallelCopyGBps: 0 };
for (let i = 0; i < 5; i++) {
  const c = await benchCopy({ bytes: weightBytes, threads, seconds: 0.1 });
  copy.memcpyGBps = Math.max(copy.memcpyGBps, c.memcpyGBps);
  copy.parallelCopyGBps = Math.max(copy.parallelCopyGBps, c.parallelCopyGBps);
  const p = await big.publishWeights(name);
  publishGBps = Math.max(publishGBps, weightBytes / p.profile.seconds / 1e9);
}

// Offload moves weights + both Adam moments (3 x weights); gradients are scratch and not kept.
const moved = 3 * weightBytes;
let offGBps = 0;
let onGBps = 0;
for (let i = 0; i < 5; i++) {
  const off = await big.offload();
  const on = await big.onload(i + 1);
  offGBps = Math.max(offGBps, moved / off.seconds / 1e9);
  onGBps = Math.max(onGBps, moved / on.seconds / 1e9);
}
await big.close();
const pctOf = (x: number, base: number) => `${f1((100 * x) / base)}%`;
console.log(
  `\nbandwidth (model ${(weightBytes / 1e6).toFixed(0)} MB weights)   GB/s    memcpy GB/s (1 thread, same bytes)`,
);
console.log(
  `  memcpy, ${threads} threads (ours)     ${copy.parallelCopyGBps.toFixed(2).padStart(6)}   ${copy.memcpyGBps.toFixed(2)}  ${pctOf(copy.parallelCopyGBps, copy.memcpyGBps)}`,
);
console.log(
  `  publish weights (shm)        ${publishGBps.toFixed(2).padStart(6)}   ${copy.memcpyGBps.toFixed(2)}  ${pctOf(publishGBps, copy.memcpyGBps)}`,
);
console.log(
  `  offload (to host)            ${offGBps.toFixed(2).padStart(6)}   ${copy.memcpyGBps.toFixed(2)}  ${pctOf(offGBps, copy.memcpyGBps)}`,
);
console.log(
  `  onload (to arena)            ${onGBps.toFixed(2).padStart(6)}   ${copy.memcpyGBps.toFixed(2)}  ${pctOf(onGBps, copy.memcpyGBps)}`,
);
