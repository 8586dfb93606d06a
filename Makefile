# classwise — plain Makefile.
#   make          library, experiment binaries, tools (and the CUDA plugin where a GPU is present)
#   make cuda     the CUDA plugin, GPU or not
#   make test     Catch2 suite (GPU parity tests skip, and are counted as skipped, without a GPU)
#   make bench    benchmark binaries, run, then the same workloads in PyTorch for the ratios (docs/speed.md)
#   make fuzz     libFuzzer targets (clang), each run for FUZZ_SECONDS
# Optimised with OpenMP; no -march=native: vector-width-specific code paths are chosen at run time
# (OpenBLAS dispatches its kernels by CPU; our hot loops use target_clones).

CXX      ?= g++
CXXFLAGS ?= -O3 -g1
CXXFLAGS += -std=c++17 -fopenmp -Wall -Wextra -Wno-unused-parameter -I. -MMD -MP
# The OpenMP build of OpenBLAS shares our OpenMP thread team; the pthreads build would run its own threads
# and both teams would spin against each other on a 2-core machine (measured: ~10x slower steps).
OPENBLAS_DIR ?= /usr/lib/$(shell gcc -print-multiarch)/openblas-openmp
# libfmt formats the percentages and durations (util/format.cpp, the one file that includes it).
# oneDNN (Debian's libdnnl, on the same OpenMP runtime) runs the CPU convolutions under CLASSWISE_CONV=onednn|auto
# and CLASSWISE_PRECISION=bf16 (engine/cpu/onednn_conv.cpp).
LDLIBS   += -L$(OPENBLAS_DIR) -Wl,-rpath,$(OPENBLAS_DIR) -lopenblas -ldnnl -lfmt -lz -ljpeg -lpthread -ldl
BUILD    := build
# The CUDA plugin's rules below come before `all:`; without this, plain `make` would build only the plugin.
.DEFAULT_GOAL := all

LIB_DIRS := util engine engine/cpu engine/ops nn nn/models datasets attacks eval train train/methods fairness/methods report cli jobs study protocols
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.cpp))
LIB_OBJS := $(LIB_SRCS:%.cpp=$(BUILD)/%.o)
LIB      := $(BUILD)/libclasswise.a

# ---- CUDA plugin (engine/cuda), loaded at run time -------------------------------------------------------------
# With nvcc and cuDNN present, `make` builds it when a GPU answers (nvidia-smi lists one), for the compute
# capabilities of the GPUs present plus the highest one's PTX. Without a GPU it would only cost the build time
# (62 CPU seconds, about 30 s on two cores, which `make && ./experiments/quickstart` would wait for): `make cuda`
# builds it anyway, for CUDA_ARCHS (default 90: H100/H200 machine code and PTX that newer GPUs JIT-compile).
CUDA_HOME ?= /usr/local/cuda
NVCC := $(wildcard $(CUDA_HOME)/bin/nvcc)
CUDNN_H := $(wildcard $(CUDA_HOME)/include/cudnn.h)
CUDA_SRCS := $(wildcard engine/cuda/*.cu)
CUDA_GPU_ARCHS := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | awk '$$1 >= 75' | sort -un)
CUDA_ARCHS ?= $(or $(CUDA_GPU_ARCHS),90)
ifneq ($(and $(NVCC),$(CUDNN_H),$(CUDA_SRCS)),)
CUDA_PLUGIN := $(BUILD)/libclasswise_cuda.so
CUDA_TOP_ARCH := $(lastword $(CUDA_ARCHS))
NVCCFLAGS ?= -O3 -std=c++17 $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
             -gencode arch=compute_$(CUDA_TOP_ARCH),code=compute_$(CUDA_TOP_ARCH)
NVCCFLAGS += -I. -Xcompiler -fPIC,-Wall -MMD -MP
CUDA_OBJS := $(CUDA_SRCS:%.cu=$(BUILD)/%.o)
$(BUILD)/engine/cuda/%.o: engine/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
$(CUDA_PLUGIN): $(CUDA_OBJS)
	$(NVCC) -shared $^ -o $@ -L$(CUDA_HOME)/lib64 -Xlinker -rpath,$(CUDA_HOME)/lib64 -lcudart_static -lcublas -lcudnn -lrt -ldl
cuda: $(CUDA_PLUGIN)
else
cuda:
	@echo "make cuda: needs nvcc and cuDNN under CUDA_HOME=$(CUDA_HOME) (bin/nvcc, include/cudnn.h)" >&2; exit 1
endif
# What `make` and `make test` build: the plugin only where a GPU can load it.
DEFAULT_CUDA_PLUGIN := $(if $(CUDA_GPU_ARCHS),$(CUDA_PLUGIN))
.PHONY: cuda
CXXFLAGS += -DCW_CUDA_PLUGIN_PATH='"$(abspath $(BUILD))/libclasswise_cuda.so"'

EXP_SRCS := $(wildcard experiments/*.cpp)
EXP_BINS := $(EXP_SRCS:%.cpp=%)
TOOL_SRCS := $(wildcard tools/*.cpp)
TOOL_BINS := $(TOOL_SRCS:tools/%.cpp=$(BUILD)/tools/%)
BENCH_SRCS := $(wildcard bench/*.cpp)
BENCH_BINS := $(BENCH_SRCS:bench/%.cpp=$(BUILD)/bench/%)
TEST_SRCS := $(wildcard tests/*.cpp)
TEST_OBJS := $(TEST_SRCS:%.cpp=$(BUILD)/%.o)
TEST_BIN := $(BUILD)/tests/classwise_tests
# The test files are assertions around library calls (the library keeps -O3): -O0 compiles them in about 40% of
# the -O3 time (test_safetensors.cpp 11.7 s at -O3, 7.6 s at -O1, 5.0 s at -O0; the whole suite's files 503 -> 367 CPU
# seconds from -O1 to -O0), which a 2-core CI machine feels over 85 files, while the suite ran 4% longer (469 -> 488 s
# in one process). `make TEST_OPT=` compiles them with CXXFLAGS alone.
TEST_OPT ?= -O0
$(TEST_OBJS): private CXXFLAGS += $(TEST_OPT)
# Catch2 and nlohmann::json precompiled for the test files (tests/catch_pch.h says why), built with their flags;
# GCC uses build/tests/pch/catch_pch.h.gch in place of the header that -include names beside it.
TEST_PCH := $(BUILD)/tests/pch/catch_pch.h
TEST_PCH_OBJS := $(filter-out $(BUILD)/tests/main.o,$(TEST_OBJS))
$(TEST_PCH).gch: tests/catch_pch.h
	@mkdir -p $(dir $@)
	cp $< $(TEST_PCH)
	$(CXX) $(CXXFLAGS) $(TEST_OPT) -x c++-header $(TEST_PCH) -o $@
$(TEST_PCH_OBJS): $(TEST_PCH).gch
$(TEST_PCH_OBJS): private CXXFLAGS += -include $(TEST_PCH) -Winvalid-pch

# The orchestration layers (flags, jobs, studies, protocols, reports, the methods' flag families, and the binaries'
# main files) spend their run time in the library's engine, attacks and trainer, not in their own code, and are
# where nlohmann::json makes compiling slow: -O1 compiles them in about 65% of the time (jobs/job.cpp 8.0 -> 5.4 s, study/study.cpp
# 5.1 -> 3.2 s), which the README's first command feels. Floating-point results do not change (no -ffast-math, no
# FMA contraction without -march). `make ORCH_OPT=` compiles them with CXXFLAGS alone.
ORCH_OPT ?= -O1
# -O1 too for the library's flag and file-format files: parsing flags (util/flags.cpp is the one file with CLI11),
# attack specs and JSON records, and reading checkpoints (about 30% less compile time each, e.g. nn/safetensors.cpp
# 9.7 -> 6.7 s).
ORCH_LIB_OBJS := $(addprefix $(BUILD)/,util/flags.o train/recipe.o attacks/registry.o nn/safetensors.o nn/safetensors_values.o eval/results_json.o \
                   eval/eval_state.o eval/corruption_state.o eval/corruption_results.o)
ORCH_OBJS := $(filter $(foreach d,report cli jobs study protocols,$(BUILD)/$(d)/%) %_family.o,$(LIB_OBJS)) \
             $(ORCH_LIB_OBJS) $(EXP_SRCS:%.cpp=$(BUILD)/%.o) $(TOOL_SRCS:%.cpp=$(BUILD)/%.o)
$(ORCH_OBJS): CXXFLAGS += $(ORCH_OPT)
# Batch norm rounds every product on its own on every CPU, and its fused ReLU's backward recomputes the forward's
# values bit for bit (engine/batchnorm_math.h): no FMA contraction there, even in a build given -march=native.
$(BUILD)/engine/cpu/batchnorm.o: CXXFLAGS += -ffp-contract=off

.PHONY: all test bench fuzz clean data
# Keep the objects that pattern chains make on the way to a binary (make would delete them as intermediates). Only
# those: a global .SECONDARY would also stop make from rebuilding a missing test or library object.
.SECONDARY: $(EXP_SRCS:%.cpp=$(BUILD)/%.o) $(TOOL_SRCS:%.cpp=$(BUILD)/%.o) $(BENCH_SRCS:%.cpp=$(BUILD)/%.o)
all: $(LIB) $(EXP_BINS) $(TOOL_BINS) $(DEFAULT_CUDA_PLUGIN)

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

experiments/%: $(BUILD)/experiments/%.o $(LIB)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(BUILD)/tools/%: $(BUILD)/tools/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(TEST_BIN): $(TEST_OBJS) $(LIB) $(DEFAULT_CUDA_PLUGIN) | $(EXP_BINS) $(TOOL_BINS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(TEST_OBJS) $(LIB) $(LDLIBS) -o $@

# Catch2's own summary plus a plain "N passed, N failed, N skipped" line (tests/main.cpp prints it).
# With no TEST_ARGS, two processes side by side (tests/run_shards.sh says why; TEST_SHARDS=1 for one).
test: $(TEST_BIN)
	$(if $(TEST_ARGS),$(TEST_BIN) $(TEST_ARGS),tests/run_shards.sh $(TEST_BIN))

# bench_engine's rows (small CNN, PreAct ResNet-18, WRN-28-10; WRN-28-10 alone takes minutes) go to
# build/bench/engine.txt, and tools/bench_pytorch_cpu.py runs the same workloads in PyTorch (fp32 and bf16
# autocast; skipped without python3-torch) and prints ours / PyTorch beside them (docs/speed.md).
# The pgd10_at row runs once per convolution setting of BENCH_CONV (native, onednn, auto, bf16: docs/engine.md).
# make bench BENCH_WORKLOADS=small,preact BENCH_FLAGS=--quick BENCH_CONV=native,bf16
BENCH_WORKLOADS ?= small,preact,wrn
BENCH_FLAGS ?=
BENCH_CONV ?= native,onednn,bf16
bench: $(BENCH_BINS)
	@for b in $(filter-out $(BUILD)/bench/bench_engine,$(BENCH_BINS)); do echo "== $$b"; $$b $(BENCH_FLAGS) || exit 1; done
	@echo "== $(BUILD)/bench/bench_engine"; \
	  { $(BUILD)/bench/bench_engine $(BENCH_FLAGS) --workloads $(BENCH_WORKLOADS) --conv $(BENCH_CONV) || echo "bench_engine failed: $$?"; } \
	  | tee $(BUILD)/bench/engine.txt; ! grep -q '^bench_engine failed' $(BUILD)/bench/engine.txt
	@echo "== tools/bench_pytorch_cpu.py"; \
	  if [ -x /usr/bin/python3 ]; then \
	    tools/bench_pytorch_cpu.py $(BENCH_FLAGS) --workloads $(BENCH_WORKLOADS) --ours $(BUILD)/bench/engine.txt; \
	  else echo "PyTorch comparison skipped: no /usr/bin/python3"; fi

# ---- fuzzing (clang + libFuzzer + ASan/UBSan) -----------------------------------------------------------
FUZZ_CXX ?= clang++
FUZZ_SECONDS ?= 30
FUZZ_FLAGS := -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I.
FUZZ_SRCS := $(wildcard fuzz/fuzz_*.cpp)
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.cpp=$(BUILD)/fuzz/%)
# A fuzz target lists the library sources it needs in a line "// fuzz-sources: a.cpp b.cpp".
$(BUILD)/fuzz/%: fuzz/%.cpp $(LIB_SRCS)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_FLAGS) $< $$(sed -n 's#^// fuzz-sources: ##p' $<) -lz -o $@

# One rule per target, so that `make -j2 fuzz` fuzzes two readers at a time (CI does).
FUZZ_RUNS := $(FUZZ_BINS:$(BUILD)/fuzz/%=fuzz-run-%)
.SECONDARY: $(FUZZ_BINS)
fuzz: $(FUZZ_RUNS)
fuzz-run-%: $(BUILD)/fuzz/%
	@name=$*; mkdir -p $(BUILD)/fuzz/corpus-$$name; \
	  seeds=""; [ -d fuzz/seeds/$$name ] && seeds=fuzz/seeds/$$name; \
	  $< -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 \
	      $(BUILD)/fuzz/corpus-$$name $$seeds > $(BUILD)/fuzz/$$name.log 2>&1 \
	      || { echo "== $$name failed:"; tail -n 40 $(BUILD)/fuzz/$$name.log; exit 1; }; \
	  echo "== $$name for $(FUZZ_SECONDS) s: $$(tail -n 1 $(BUILD)/fuzz/$$name.log)"

# Official archives from the official sites, checksums verified (needs internet): make data DATASET=cifar10
DATASET ?= all
data:
	scripts/download_data.sh $(DATASET)

clean:
	rm -rf $(BUILD) $(EXP_BINS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
