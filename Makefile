# pg_kmeans: PGXS build. `make` configures and builds the engine with CMake
# (build/), then compiles the PostgreSQL glue (src/pg/, map in
# src/pg/README.md) and links pg_kmeans.so; `make install` also installs the
# CUDA plugin when one was built.
EXTENSION   = pg_kmeans
MODULE_big  = pg_kmeans
GLUE        = module args errors budget relation read scan buffer row_convert \
              clustering srf arrays model model_store model_load model_values
OBJS        = $(GLUE:%=src/pg/%.o)
DATA        = sql/pg_kmeans--0.1.sql
# The pg_regress schedule (sql/NAME.sql against expected/NAME.out), in this
# order: what one call does, the data it reads, the methods, the models.
# gpu_unavailable is last: GPU hosts skip it (tests/gpu/run_gpu_suite.sh
# reads this list with `make -s print-regress`). A new test goes on its
# group's line; installcheck refuses a sql/*.sql that is on none.
REGRESS     = basics errors quoting privileges inheritance numeric_range budget output progress
REGRESS    += methods kernel
REGRESS    += models model_values model_privileges model_search_path kernel_models
REGRESS    += gpu_unavailable
REGRESS_UNLISTED = $(filter-out $(REGRESS) pg_kmeans--%,$(notdir $(basename $(wildcard sql/*.sql))))
REGRESS_OPTS = --load-extension=pg_kmeans
EXTRA_CLEAN = build results regression.diffs regression.out

PG_CONFIG  ?= pg_config
CMAKE      ?= cmake
PGKM_CUDA  ?= AUTO
BUILD_DIR  ?= build
CMAKE_EXTRA ?=

# PGXS links with gcc (Makefile.shlib), so name libstdc++ explicitly. No LLVM
# bitcode: PGXS would compile C++17 with clang in gnu++14 mode.
override with_llvm = no
PG_CPPFLAGS = -I$(CURDIR)/src/engine
PG_CXXFLAGS = -std=c++17 -Wno-register -O2 -Wall -Wextra -isystem $(includedir_server)
# --exclude-libs hides the archives' symbols from other extensions. Never
# -fvisibility=hidden here: PGDLLEXPORT is empty on Linux in PG15.
SHLIB_LINK  = $(ENGINE_LIB) $(ENGINE_LINK) -lstdc++ -Wl,--exclude-libs,ALL

ifeq ($(filter clean distclean installcheck check print-regress,$(MAKECMDGOALS)),)
include $(BUILD_DIR)/engine_link.mk
endif

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(BUILD_DIR)/engine_link.mk: CMakeLists.txt
	$(CMAKE) -S . -B $(BUILD_DIR) -DPGKM_CUDA=$(PGKM_CUDA) $(CMAKE_EXTRA)
	touch $@

.PHONY: engine engine-test install-cuda-plugin print-regress check-regress-list
engine: $(BUILD_DIR)/engine_link.mk
	$(CMAKE) --build $(BUILD_DIR) -j$(shell nproc)
$(ENGINE_LIB): engine
$(shlib): $(ENGINE_LIB)
$(OBJS): src/engine/pgkm_engine.h $(wildcard src/pg/*.h)

print-regress installcheck: check-regress-list
check-regress-list:
ifneq ($(REGRESS_UNLISTED),)
	$(error sql/ holds tests that REGRESS does not list: $(REGRESS_UNLISTED))
endif

print-regress:
	@echo $(REGRESS)

engine-test: engine
	cd $(BUILD_DIR) && ctest --output-on-failure

install: install-cuda-plugin
install-cuda-plugin:
ifneq ($(CUDA_PLUGIN),)
	$(INSTALL_SHLIB) $(CUDA_PLUGIN) '$(DESTDIR)$(pkglibdir)/pg_kmeans_cuda.so'
endif
