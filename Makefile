# pg_kmeans: PGXS build. `make` configures and builds the engine with CMake
# (build/), then compiles the PostgreSQL glue (src/*.cpp) and links
# pg_kmeans.so; `make install` also installs the CUDA plugin when one was built.
EXTENSION   = pg_kmeans
MODULE_big  = pg_kmeans
OBJS        = $(patsubst %.cpp,%.o,$(wildcard src/pg/*.cpp))
DATA        = sql/pg_kmeans--0.1.sql
REGRESS     = $(filter-out pg_kmeans--%,$(notdir $(basename $(wildcard sql/*.sql))))
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

ifeq ($(filter clean distclean installcheck check,$(MAKECMDGOALS)),)
include $(BUILD_DIR)/engine_link.mk
endif

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(BUILD_DIR)/engine_link.mk: CMakeLists.txt
	$(CMAKE) -S . -B $(BUILD_DIR) -DPGKM_CUDA=$(PGKM_CUDA) $(CMAKE_EXTRA)
	touch $@

.PHONY: engine engine-test install-cuda-plugin
engine: $(BUILD_DIR)/engine_link.mk
	$(CMAKE) --build $(BUILD_DIR) -j$(shell nproc)
$(ENGINE_LIB): engine
$(shlib): $(ENGINE_LIB)
$(OBJS): src/engine/pgkm_engine.h $(wildcard src/pg/*.h)

engine-test: engine
	cd $(BUILD_DIR) && ctest --output-on-failure

install: install-cuda-plugin
install-cuda-plugin:
ifneq ($(CUDA_PLUGIN),)
	$(INSTALL_SHLIB) $(CUDA_PLUGIN) '$(DESTDIR)$(pkglibdir)/pg_kmeans_cuda.so'
endif
