# sluice: one non-recursive Makefile.
#
#   make                 build common/ (build/.../libsluice.a), bin/NAME for every handler, bin/sluiced
#   make run             install missing packages, build, seed, serve on 127.0.0.1:8080 (PROFILE=tuned|default)
#   make run SERVER=apache   the same behind Apache on 127.0.0.1:8081 (PROFILE=tuned|default|cgi|fcgid)
#   make test            install missing packages, build, run unit and integration tests
#   make SANITIZE=1 test the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make deps            install the Debian packages sluice needs (apt-get, through sudo when not root)
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
CPPFLAGS += -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Icommon -Itests/lib -I/usr/include/postgresql

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
LDLIBS   := -lfcgi -lcjson -lsqlite3 -lpq -lbrotlienc -lbrotlidec -lz -lcrypto -lseccomp -lm

COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(COMMON_SRC:%.c=$(O)/%.o)
LIB        := $(O)/libsluice.a

# Handlers: handlers/NAME.c or handlers/NAME/*.c -> bin/NAME.
HANDLER_FILES := $(wildcard handlers/*.c)
HANDLER_DIRS  := $(patsubst %/,%,$(sort $(dir $(wildcard handlers/*/*.c))))
HANDLERS      := $(sort $(notdir $(HANDLER_FILES:.c=)) $(notdir $(HANDLER_DIRS)))
HANDLER_BINS  := $(HANDLERS:%=$(BIN)/%)

SUPERVISOR_SRC := $(wildcard supervisor/*.c)
SUPERVISOR_OBJ := $(SUPERVISOR_SRC:%.c=$(O)/%.o)

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)
INTEG_SRC  := $(wildcard tests/integration/test_*.c)
INTEG_BINS := $(INTEG_SRC:tests/integration/%.c=$(O)/tests/%)
TESTLIB_SRC := $(wildcard tests/lib/*.c)
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(O)/%.o)
# Seeders: sql/DIR/seed.c -> $(O)/sql/DIR-seed (standalone loaders, run by sql/DIR/seed.sh).
SEED_SRC   := $(wildcard sql/*/seed.c)
SEED_BINS  := $(SEED_SRC:sql/%/seed.c=$(O)/sql/%-seed)
# Test-only endpoints: tests/handlers/NAME.c -> $(O)/tests/handlers/NAME, served by sluiced
# in integration tests (binary= on the endpoint's line), never built into bin/.
TESTHANDLER_SRC  := $(wildcard tests/handlers/*.c)
TESTHANDLER_BINS := $(TESTHANDLER_SRC:tests/handlers/%.c=$(O)/tests/handlers/%)
BENCH_SRC  := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRC:bench/%.c=$(O)/bench/%)

DEPFLAGS = -MMD -MP

.PHONY: all deps run test unit integration clean check-env bench leakcheck sqlmap
all: $(LIB) $(HANDLER_BINS) $(BIN)/sluiced $(SEED_BINS)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(LIB): $(COMMON_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

# One rule per handler shape: a single file, or a folder of files.
define handler_file
$(BIN)/$(1): $(O)/handlers/$(1).o $(LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
define handler_dir
$(BIN)/$(1): $(patsubst %.c,$(O)/%.o,$(wildcard handlers/$(1)/*.c)) $(LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach f,$(HANDLER_FILES),$(eval $(call handler_file,$(notdir $(f:.c=)))))
$(foreach d,$(HANDLER_DIRS),$(eval $(call handler_dir,$(notdir $(d)))))

$(BIN)/sluiced: $(SUPERVISOR_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/%: $(O)/tests/unit/%.o $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcurl

$(O)/tests/%: $(O)/tests/integration/%.o $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcurl

$(TESTHANDLER_BINS): $(O)/tests/handlers/%: $(O)/tests/handlers/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.SECONDARY: $(SEED_SRC:%.c=$(O)/%.o)
$(O)/sql/%-seed: $(O)/sql/%/seed.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# bench/*.c are standalone programs (the bare fcgi2 ceiling); they use no common/ code.
$(O)/bench/%: $(O)/bench/%.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lfcgi

# Packages, by Debian name.  nginx-light is enough; an installed nginx of any flavour counts.
DEB_BUILD := gcc make pkg-config libfcgi-dev libcjson-dev libsqlite3-dev libpq-dev sqlite3 \
             libssl-dev libbrotli-dev zlib1g-dev libseccomp-dev
DEB_RUN   := nginx-light apache2 libapache2-mod-fcgid
DEB_TEST  := postgresql libcurl4-openssl-dev procps curl clang libclang-rt-14-dev nodejs npm \
             e2fsprogs cppcheck clang-tidy
DEB_BENCH := wrk gnuplot-nox
deps:
	@bash conf/deps.sh $(DEB_BUILD) $(DEB_RUN) $(DEB_TEST) $(DEB_BENCH)
# Installed only by their own targets (not by `make deps`: CI does not need them).
DEB_LEAK   := valgrind python3
DEB_SQLMAP := sqlmap python3

run: deps
	@$(MAKE) --no-print-directory all
	@SERVER=$(SERVER) bash supervisor/run.sh $(PROFILE)

# The benchmark suite (bench/run): every suite, or SUITES="proxy footprint".
bench: deps
	@$(MAKE) --no-print-directory all build/rel/bench/hello
	@bash bench/run $(SUITES)

# Memory over many requests through the stack (tests/leakcheck.sh): every worker under
# valgrind for 5,000 requests, then the release workers' RSS over 100,000.  Minutes, so
# not part of `make test`.
leakcheck: deps
	@bash conf/deps.sh $(DEB_LEAK)
	@$(MAKE) --no-print-directory SANITIZE= all
	@bash tests/leakcheck.sh all

# SQL injection probing with sqlmap (tests/sqlmap.sh) against the rest and chat endpoints,
# on SQLite and on a throwaway PostgreSQL cluster.  Minutes, so not part of `make test`.
sqlmap: deps
	@bash conf/deps.sh $(DEB_SQLMAP)
	@$(MAKE) --no-print-directory SANITIZE= all
	@bash tests/sqlmap.sh

unit: $(UNIT_BINS)
integration: all $(INTEG_BINS) $(TESTHANDLER_BINS) $(BENCH_BINS)

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS) $(INTEG_BINS) $(TESTHANDLER_BINS) $(BENCH_BINS) fuzz-build
	@SLUICE_BIN=$(BIN) SLUICE_TESTS=$(O)/tests SLUICE_FUZZ=$(FUZZ_O) LINT_CPPFLAGS="$(CPPFLAGS)" \
	    bash tests/run.sh

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

$(FUZZ_O)/common/%.o: common/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_O)/libsluice.a: $(FUZZ_LIBOBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_O)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_O)/libsluice.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer -MMD -MP -MF $@.d -o $@ $< \
	    $(FUZZ_O)/libsluice.a $(LDLIBS) -pthread

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; mkdir -p $(FUZZ_O)/corpus-$$n; \
	    echo "== fuzz_$$n for $${FUZZ_SECONDS:-60} s"; \
	    $$f -max_total_time=$${FUZZ_SECONDS:-60} -print_final_stats=1 \
	        $$( [ -f tests/fuzz/$$n.dict ] && echo -dict=tests/fuzz/$$n.dict) \
	        $(FUZZ_O)/corpus-$$n tests/fuzz/corpus/$$n || exit 1; done

# Static analysis: cppcheck and clang-tidy (.clang-tidy) over common/, handlers/ and
# supervisor/ with the build's preprocessor flags; any finding fails (tests/lint/README).
.PHONY: lint
lint:
	@LINT_CPPFLAGS="$(CPPFLAGS)" bash tests/lint/run.sh

clean:
	rm -rf build bin

-include $(FUZZ_LIBOBJ:.o=.d) $(COMMON_OBJ:.o=.d) $(SUPERVISOR_OBJ:.o=.d) $(TESTLIB_OBJ:.o=.d) \
    $(HANDLERS:%=$(O)/handlers/%.d) $(UNIT_BINS:$(O)/tests/%=$(O)/tests/unit/%.d) \
    $(INTEG_BINS:$(O)/tests/%=$(O)/tests/integration/%.d) $(SEED_SRC:%.c=$(O)/%.d) \
    $(TESTHANDLER_BINS:%=%.d) $(FUZZ_BINS:=.d)
