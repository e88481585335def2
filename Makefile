# sluice: one non-recursive Makefile.
#
#   make                 build the libraries (common/, apps/*, supervisor/), bin/NAME for every
#                        handler, bin/sluiced
#   make run             install what running needs, build, seed, serve on 127.0.0.1:8080
#                        (PROFILE=tuned|default, LISTEN=ADDR:PORT); says so only once its own
#                        nginx and every pool answer, else exits non-zero with the reason
#   make run SERVER=apache   the same behind Apache on 127.0.0.1:8081 (PROFILE=tuned|default|cgi|fcgid)
#   make run DB=postgresql   the same on a local PostgreSQL cluster in data/pg, started and
#                        seeded for it, stopped with it (make pg says the same)
#   make test            install what testing needs, build, run unit and integration tests
#   make check           the unit tests and the layering (seconds); make check-integration:
#                        the rest.  T=NAME: one program of them, built and run (TEST=CASE in
#                        the environment: one case of it)
#   make SANITIZE=1 test the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make deps            install the Debian packages make run needs (apt-get, through sudo when
#                        not root) and, as root, the system user sluice; deps-test and
#                        deps-bench: what make test and make bench need
#   make leakcheck       valgrind and RSS of every worker over many requests (minutes)
#   make sqlmap          sqlmap against the rest and chat endpoints (minutes)
#
# A release build puts its binaries in bin/; a sanitizer build in build/san/bin/, so the two
# never mix and tests always know which binaries they drive (SLUICE_BIN).

CC       ?= cc
SANITIZE ?=
PROFILE  ?= tuned
SERVER   ?= nginx

WARN     := -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wformat=2 -Wwrite-strings -Wcast-qual -fno-common -Werror
# Everything sees common/ and, by folder, the applications ("chat/chat.h", "rest/rest.h");
# supervisor/ headers only the supervisor (its own folder) and the tests, which also see a
# several-file endpoint's own header by folder ("rest/route.h", after apps/).
CPPFLAGS += -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Icommon -Iapps -I/usr/include/postgresql
TEST_CPPFLAGS := -Isupervisor -Itests/lib -Ihandlers

ifeq ($(SANITIZE),)
O        := build/rel
BIN      := bin
OPT      := -O2 -g -fstack-protector-strong -D_FORTIFY_SOURCE=2
SANFLAGS :=
else
O        := build/san
BIN      := build/san/bin
OPT      := -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
endif

CFLAGS   += $(WARN) $(OPT) $(SANFLAGS) -pthread
LDFLAGS  += $(SANFLAGS) -pthread -Wl,--as-needed
LDLIBS   := -lfcgi -lcjson -lsqlite3 -lpcre2-8 -lpq -lbrotlienc -lbrotlidec -lz -lcrypto -lcrypt -lseccomp -lm
# libjwt (the rest engine's token signatures, apps/rest/auth.c): bin/rest, and the tests
# and fuzzers that link its library (--as-needed drops it from the others).
JWT_LIBS := -ljwt
# The endpoint binaries and sluiced load libpq only when a database is PostgreSQL
# (common/pq.h: its dependencies cost every process that maps them private pages); -ldl
# for a C library older than glibc 2.34.
BIN_LDLIBS := $(filter-out -lpq,$(LDLIBS)) -ldl

# The libraries, one per part; nothing reaches sideways:
#   common/      $(O)/libsluice.a        what any endpoint binary may use
#   apps/NAME/   $(O)/libapp_NAME.a      code shared by the binaries of one application
#   supervisor/  $(O)/libsupervisor.a    sluiced's parts (endpoint list, pools, generators);
#                                        sluiced.c holds its main()
#   handlers/NAME/  $(O)/handlers/libNAME.a  a several-file endpoint's parts; its main.c
#                                        holds main(), so tests and fuzzers link the rest
COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(COMMON_SRC:%.c=$(O)/%.o)
LIB        := $(O)/libsluice.a

APPS       := $(notdir $(patsubst %/,%,$(sort $(dir $(wildcard apps/*/*.c)))))
APP_LIBS   := $(APPS:%=$(O)/libapp_%.a)

SUPERVISOR_SRC := $(filter-out supervisor/sluiced.c,$(wildcard supervisor/*.c))
SUPERVISOR_OBJ := $(SUPERVISOR_SRC:%.c=$(O)/%.o)
SUPERVISOR_LIB := $(O)/libsupervisor.a

# Handlers: handlers/NAME.c or handlers/NAME/*.c -> bin/NAME.
HANDLER_FILES := $(wildcard handlers/*.c)
HANDLER_DIRS  := $(patsubst %/,%,$(sort $(dir $(wildcard handlers/*/*.c))))
HANDLERS      := $(sort $(notdir $(HANDLER_FILES:.c=)) $(notdir $(HANDLER_DIRS)))
HANDLER_BINS  := $(HANDLERS:%=$(BIN)/%)
HANDLER_LIBS  := $(foreach d,$(HANDLER_DIRS),$(if $(wildcard $(d)/main.c),$(O)/handlers/lib$(notdir $(d)).a))

# What every program links after its own objects: the handler libraries, the applications',
# then common's (a static library gives only the objects a program uses).
LINK_LIBS  := $(HANDLER_LIBS) $(APP_LIBS) $(LIB)

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)
INTEG_SRC  := $(wildcard tests/integration/test_*.c)
INTEG_BINS := $(INTEG_SRC:tests/integration/%.c=$(O)/tests/%)
# Integration tests written in shell (tests/integration/test_*.sh) are copied next to the
# C ones, so that tests/run.sh finds and counts them the same way.
INTEG_SH   := $(wildcard tests/integration/test_*.sh)
INTEG_SH_BINS := $(INTEG_SH:tests/integration/%.sh=$(O)/tests/%)
INTEG_BINS += $(INTEG_SH_BINS)
TESTLIB_SRC := $(wildcard tests/lib/*.c)
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(O)/%.o)
# Seeders: sql/DIR/seed.c -> $(O)/sql/DIR-seed (standalone loaders, run by sql/DIR/seed.sh),
# with what they share in sql/seedfile.c (temporary file renamed when complete, progress).
SEED_SRC   := $(wildcard sql/*/seed.c)
SEED_BINS  := $(SEED_SRC:sql/%/seed.c=$(O)/sql/%-seed)
# Test-only endpoints: tests/handlers/NAME.c -> $(O)/tests/handlers/NAME, served by sluiced
# in integration tests (binary= on the endpoint's line), never built into bin/.
TESTHANDLER_SRC  := $(wildcard tests/handlers/*.c)
TESTHANDLER_BINS := $(TESTHANDLER_SRC:tests/handlers/%.c=$(O)/tests/handlers/%)
BENCH_SRC  := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRC:bench/%.c=$(O)/bench/%)

DEPFLAGS = -MMD -MP

.PHONY: all deps run test check check-integration unit integration clean check-env bench leakcheck sqlmap
all: $(LIB) $(APP_LIBS) $(HANDLER_BINS) $(BIN)/sluiced $(SEED_BINS)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(O)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(TEST_CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(LIB): $(COMMON_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(SUPERVISOR_LIB): $(SUPERVISOR_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

define app_lib
$(O)/libapp_$(1).a: $(patsubst %.c,$(O)/%.o,$(wildcard apps/$(1)/*.c))
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach a,$(APPS),$(eval $(call app_lib,$(a))))

# One rule per handler shape: a single file, or a folder of files.
# A folder with a main.c is a library (everything else) plus main.o; without one, its
# objects link directly.
define handler_file
$(BIN)/$(1): $(O)/handlers/$(1).o $(LINK_LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(BIN_LDLIBS)
endef
define handler_dir
ifeq ($(wildcard handlers/$(1)/main.c),)
$(BIN)/$(1): $(patsubst %.c,$(O)/%.o,$(wildcard handlers/$(1)/*.c)) $(LINK_LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(BIN_LDLIBS)
else
$(O)/handlers/lib$(1).a: $(patsubst %.c,$(O)/%.o,$(filter-out handlers/$(1)/main.c,$(wildcard handlers/$(1)/*.c)))
	@rm -f $$@
	$$(AR) rcs $$@ $$^
$(BIN)/$(1): $(O)/handlers/$(1)/main.o $(LINK_LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(BIN_LDLIBS) $$(LDLIBS_$(1))
endif
endef
LDLIBS_rest := $(JWT_LIBS)
$(foreach f,$(HANDLER_FILES),$(eval $(call handler_file,$(notdir $(f:.c=)))))
$(foreach d,$(HANDLER_DIRS),$(eval $(call handler_dir,$(notdir $(d)))))

# bin/chat_script embeds the page's script (.incbin, which -MMD does not see).
$(O)/handlers/chat_script.o: handlers/chat_script.js

$(BIN)/sluiced: $(O)/supervisor/sluiced.o $(SUPERVISOR_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(BIN_LDLIBS)

$(O)/tests/%: $(O)/tests/unit/%.o $(TESTLIB_OBJ) $(SUPERVISOR_LIB) $(LINK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcurl $(JWT_LIBS)

$(O)/tests/%: $(O)/tests/integration/%.o $(TESTLIB_OBJ) $(SUPERVISOR_LIB) $(LINK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcurl $(JWT_LIBS)

$(INTEG_SH_BINS): $(O)/tests/%: tests/integration/%.sh
	@mkdir -p $(dir $@)
	install -m 755 $< $@

$(TESTHANDLER_BINS): $(O)/tests/handlers/%: $(O)/tests/handlers/%.o $(LINK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.SECONDARY: $(SEED_SRC:%.c=$(O)/%.o) $(O)/sql/seedfile.o $(TESTLIB_OBJ) $(UNIT_SRC:%.c=$(O)/%.o) \
            $(INTEG_SRC:%.c=$(O)/%.o)
$(O)/sql/%-seed: $(O)/sql/%/seed.o $(O)/sql/seedfile.o $(LINK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# bench/*.c are standalone programs (the bare fcgi2 ceiling, the open-loop load generator);
# they use no common/ code.
$(O)/bench/%: $(O)/bench/%.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi

# Packages, by Debian name, by what needs them: `make run` installs the build and run sets
# (and Apache's with SERVER=apache, PostgreSQL's with DB=postgresql), `make test` everything
# the tests drive or run (Apache and PostgreSQL too, the linters, wrk for the benchmark's
# smoke run), `make bench` the benchmark's.  nginx-light is enough; an installed nginx of
# any flavour counts.  Every deps target also creates the system user sluice that the
# workers run as when started as root (conf/users.sh).
DEB_BUILD  := gcc make pkg-config libfcgi-dev libcjson-dev libsqlite3-dev libpq-dev sqlite3 \
              libssl-dev libbrotli-dev zlib1g-dev libseccomp-dev libjwt-dev libpcre2-dev
DEB_RUN    := nginx-light curl
DEB_APACHE := apache2 libapache2-mod-fcgid libapache2-mod-qos
DEB_PG     := postgresql
# PostGIS for Debian 12's PostgreSQL 15: test_rest_geojson and the postgrest-js suite's
# geojson test (Accept: application/geo+json).
DEB_POSTGIS := postgresql-15-postgis-3
DEB_TEST   := $(DEB_APACHE) $(DEB_PG) $(DEB_POSTGIS) libcurl4-openssl-dev procps iproute2 util-linux clang libclang-rt-14-dev \
              nodejs npm chromium e2fsprogs cppcheck clang-tidy wrk
DEB_BENCH  := $(DEB_APACHE) $(DEB_PG) wrk gnuplot-nox
DB ?= sqlite
RUN_DEBS   := $(DEB_BUILD) $(DEB_RUN) $(if $(filter apache,$(SERVER)),$(DEB_APACHE)) \
              $(if $(filter postgresql,$(DB)),$(DEB_PG))

.PHONY: deps-test deps-bench pg
deps:
	@bash conf/deps.sh $(RUN_DEBS)
	@bash conf/users.sh
deps-test:
	@bash conf/deps.sh $(DEB_BUILD) $(DEB_RUN) $(DEB_TEST)
	@bash conf/users.sh
deps-bench:
	@bash conf/deps.sh $(DEB_BUILD) $(DEB_RUN) $(DEB_BENCH)
	@bash conf/users.sh
# Installed only by their own targets (not by `make deps`: CI does not need them).
DEB_LEAK   := valgrind python3
DEB_SQLMAP := sqlmap python3

# make run [PROFILE=..] [SERVER=nginx|apache] [LISTEN=ADDR:PORT] [DB=sqlite|postgresql]
# (supervisor/run.sh); make pg is make run DB=postgresql.
run: deps
	@$(MAKE) --no-print-directory all
	@SERVER=$(SERVER) LISTEN=$(LISTEN) DB=$(DB) bash supervisor/run.sh $(PROFILE)

pg:
	@$(MAKE) --no-print-directory run DB=postgresql

# The benchmark suite (bench/run): every suite, or SUITES="proxy footprint".
bench: deps-bench
	@$(MAKE) --no-print-directory all build/rel/bench/hello build/rel/bench/oload
	@bash bench/run $(SUITES)

# Memory over many requests through the stack (tests/leakcheck.sh): every worker under
# valgrind for 5,000 requests, then the release workers' RSS over 100,000.  Minutes, so
# not part of `make test`.
leakcheck: deps-test
	@bash conf/deps.sh $(DEB_LEAK)
	@$(MAKE) --no-print-directory SANITIZE= all
	@bash tests/leakcheck.sh all

# SQL injection probing with sqlmap (tests/sqlmap.sh) against the rest and chat endpoints,
# on SQLite and on a throwaway PostgreSQL cluster.  Minutes, so not part of `make test`.
sqlmap: deps-test
	@bash conf/deps.sh $(DEB_SQLMAP)
	@$(MAKE) --no-print-directory SANITIZE= all
	@bash tests/sqlmap.sh

unit: $(UNIT_BINS)
integration: all $(INTEG_BINS) $(TESTHANDLER_BINS) $(BENCH_BINS)

TEST_ENV = SLUICE_BIN=$(BIN) SLUICE_TESTS=$(O)/tests SLUICE_FUZZ=$(FUZZ_O) SLUICE_OBJ=$(O) \
           SLUICE_UNIT="$(UNIT_BINS)" LINT_CPPFLAGS="$(CPPFLAGS) $(TEST_CPPFLAGS)"

# make test: everything (the README's test command, and CI's).  make check: the unit tests,
# the layering (tests/lint/layers.sh, over the build's objects) and the functions' lengths
# (tests/lint/funclen.sh), in seconds, installing nothing (test_db starts a throwaway
# PostgreSQL cluster of its own).  make
# check-integration: the rest (the real stack over HTTP, fuzz replay, static analysis, the
# benchmark smoke run).  With T=NAME (test_NAME or NAME) either builds and runs that one
# program of tests/unit/ or tests/integration/ alone; TEST=CASE, passed on to it, runs one
# of its cases (tests/lib/harness.h).
# The build before the tests uses every core (BUILD_JOBS), unless make was given -j itself.
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(BUILD_JOBS))

test: deps-test
	@$(MAKE) --no-print-directory $(BUILD_J) all $(UNIT_BINS) $(INTEG_BINS) $(TESTHANDLER_BINS) $(BENCH_BINS) fuzz-build
	@$(TEST_ENV) bash tests/run.sh

T_NAME := $(if $(T),test_$(patsubst test_%,%,$(basename $(notdir $(T)))))
T_PROG := $(if $(T),$(O)/tests/$(T_NAME))

ifeq ($(T),)
check: all $(UNIT_BINS)
	@$(TEST_ENV) SLUICE_LAYERS=1 bash tests/run.sh $(UNIT_BINS)

check-integration: deps-test
	@$(MAKE) --no-print-directory $(BUILD_J) all $(INTEG_BINS) $(TESTHANDLER_BINS) $(BENCH_BINS) fuzz-build
	@$(TEST_ENV) SLUICE_SKIP_UNIT=1 bash tests/run.sh
else
check: $(if $(wildcard tests/unit/$(T_NAME).c),$(T_PROG),check-no-unit)
	@$(TEST_ENV) bash tests/run.sh $(T_PROG)

check-integration: $(if $(wildcard $(T_NAME:%=tests/integration/%.c) \
    $(T_NAME:%=tests/integration/%.sh)),deps-test,check-no-integration)
	@$(MAKE) --no-print-directory all $(T_PROG) $(TESTHANDLER_BINS) $(BENCH_BINS)
	@$(TEST_ENV) bash tests/run.sh $(T_PROG)
endif

.PHONY: check-no-unit check-no-integration
check-no-unit:
	@echo "no unit test tests/unit/$(T_NAME).c; they are: $(notdir $(UNIT_BINS))"; exit 2
check-no-integration:
	@echo "no integration test tests/integration/$(T_NAME).c; they are: $(notdir $(INTEG_BINS))"; exit 2

# Fuzzing: libFuzzer harnesses (tests/fuzz/fuzz_*.c) over the whole common library, built
# with clang under ASan and UBSan.  `make test` runs each over its committed corpus and then
# for FUZZ_SECONDS (5); `make fuzz` runs each for FUZZ_SECONDS (default there: 60) and keeps
# what it finds in build/fuzz/corpus-NAME (the committed corpus is only read).
FUZZ_O      := build/fuzz
FUZZ_CC     := clang
FUZZ_FLAGS  := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=all
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS   := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_O)/%)
FUZZ_LIBOBJ := $(COMMON_SRC:%.c=$(FUZZ_O)/%.o)
FUZZ_LIBS   := $(HANDLER_LIBS:$(O)/%=$(FUZZ_O)/%) $(APP_LIBS:$(O)/%=$(FUZZ_O)/%) \
               $(FUZZ_O)/libsupervisor.a $(FUZZ_O)/libsluice.a
FUZZ_ALLOBJ := $(FUZZ_LIBOBJ) $(SUPERVISOR_OBJ:$(O)/%=$(FUZZ_O)/%) \
               $(foreach a,$(APPS),$(patsubst %.c,$(FUZZ_O)/%.o,$(wildcard apps/$(a)/*.c))) \
               $(foreach d,$(HANDLER_DIRS),$(if $(wildcard $(d)/main.c),$(patsubst %.c,$(FUZZ_O)/%.o,$(filter-out $(d)/main.c,$(wildcard $(d)/*.c)))))

$(FUZZ_O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_O)/libsluice.a: $(FUZZ_LIBOBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_O)/libsupervisor.a: $(SUPERVISOR_OBJ:$(O)/%=$(FUZZ_O)/%)
	@rm -f $@
	$(AR) rcs $@ $^

define fuzz_lib
$(FUZZ_O)/$(1): $(2)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach a,$(APPS),$(eval $(call fuzz_lib,libapp_$(a).a,$(patsubst %.c,$(FUZZ_O)/%.o,$(wildcard apps/$(a)/*.c)))))
$(foreach l,$(HANDLER_LIBS),$(eval $(call fuzz_lib,$(l:$(O)/%=%),$(patsubst %.c,$(FUZZ_O)/%.o,$(filter-out $(patsubst $(O)/handlers/lib%.a,handlers/%/main.c,$(l)),$(wildcard $(patsubst $(O)/handlers/lib%.a,handlers/%/*.c,$(l))))))))

$(FUZZ_O)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIBS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(TEST_CPPFLAGS) -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer -MMD -MP -MF $@.d -o $@ $< \
	    $(FUZZ_EXTRA) $(FUZZ_LIBS) $(LDLIBS) $(JWT_LIBS) -pthread

# fuzz_jwt signs the tokens it makes with the tests' JWT maker (tests/lib/jwtmake.c).
$(FUZZ_O)/fuzz_jwt: FUZZ_EXTRA := $(FUZZ_O)/tests/lib/jwtmake.o
$(FUZZ_O)/fuzz_jwt: $(FUZZ_O)/tests/lib/jwtmake.o

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; mkdir -p $(FUZZ_O)/corpus-$$n; \
	    echo "== fuzz_$$n for $${FUZZ_SECONDS:-60} s"; \
	    $$f -max_total_time=$${FUZZ_SECONDS:-60} -print_final_stats=1 \
	        $$( [ -f tests/fuzz/$$n.dict ] && echo -dict=tests/fuzz/$$n.dict) \
	        $(FUZZ_O)/corpus-$$n tests/fuzz/corpus/$$n || exit 1; done

# Static analysis: cppcheck and clang-tidy (.clang-tidy) over common/, apps/, handlers/
# and supervisor/ with the build's preprocessor flags; any finding fails (tests/lint/README).
.PHONY: lint
lint: all
	@SLUICE_OBJ=$(O) SLUICE_BIN=$(BIN) LINT_CPPFLAGS="$(CPPFLAGS) $(TEST_CPPFLAGS)" bash tests/lint/run.sh

clean:
	rm -rf build bin

-include $(FUZZ_ALLOBJ:.o=.d) $(COMMON_OBJ:.o=.d) $(SUPERVISOR_OBJ:.o=.d) $(TESTLIB_OBJ:.o=.d) \
    $(O)/supervisor/sluiced.d $(patsubst %.c,$(O)/%.d,$(wildcard apps/*/*.c handlers/*/*.c)) \
    $(HANDLERS:%=$(O)/handlers/%.d) $(UNIT_BINS:$(O)/tests/%=$(O)/tests/unit/%.d) \
    $(INTEG_BINS:$(O)/tests/%=$(O)/tests/integration/%.d) $(SEED_SRC:%.c=$(O)/%.d) $(O)/sql/seedfile.d \
    $(TESTHANDLER_BINS:%=%.d) $(FUZZ_BINS:=.d)
