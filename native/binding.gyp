{
  "variables": {
    "have_blas%": "<!(node tools/detect-blas.mjs)"
  },
  "targets": [
    {
      "target_name": "timeshare_engine",
      "sources": [
        "src/device/thread-pool.cc",
        "src/device/cpu-device.cc",
        "src/device/host-memory.cc",
        "src/tensor/sgemm.cc",
        "src/tensor/sgemm-avx2.cc",
        "src/tensor/blas-gemm.cc",
        "src/model/config.cc",
        "src/model/param-layout.cc",
        "src/model/kernels.cc",
        "src/model/attention.cc",
        "src/model/transformer.cc",
        "src/train/adamw.cc",
        "src/train/policy-loss.cc",
        "src/train/grad-check.cc",
        "src/tasks/char-task.cc",
        "src/tasks/addition.cc",
        "src/tasks/reversal.cc",
        "src/tasks/sorting.cc",
        "src/tasks/task-registry.cc",
        "src/gen/generator.cc",
        "src/io/json-lite.cc",
        "src/io/safetensors.cc",
        "src/sync/weight-shm.cc",
        "src/engine/engine.cc",
        "src/engine/engine-train.cc",
        "src/engine/engine-accumulate.cc",
        "src/engine/engine-state.cc",
        "src/binding/async-call.cc",
        "src/binding/engine-object.cc",
        "src/binding/bench-exports.cc",
        "src/binding/addon.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "src"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-O3", "-march=x86-64-v2", "-fno-trapping-math", "-fno-math-errno", "-fexceptions", "-frtti", "-Wall", "-Wno-unused-parameter"],
      "libraries": ["-lpthread", "-lrt"],
      "conditions": [
        ["have_blas==1", {
          "defines": ["TIMESHARE_HAVE_CBLAS=1"],
          "libraries": ["-lopenblas"]
        }]
      ]
    }
  ]
}
