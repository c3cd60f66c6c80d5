# The two commands of the README: `make run` and `make test`. Each first installs what is
# missing (scripts/setup.sh). The cargo target dir lives under ~/.cache so that CI runs on the
# same machine stay warm; a cold run builds everything from scratch and passes the same way.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export CARGO_TARGET_DIR ?= $(HOME)/.cache/healer/target
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: run test setup-run setup-test ui build lint unit e2e bindings figures bench faults package package-test

run: setup-run ui
	cargo run -p healer-desktop

test: setup-test lint unit ui build e2e package-test
	@echo "make test: all checks passed"

setup-run:
	bash scripts/setup.sh run

setup-test:
	bash scripts/setup.sh test

ui:
	cd ui && npm run build

lint: ui
	cargo fmt --all --check
	cd ui && npm run typecheck && npm run lint
	cargo clippy --workspace --all-targets -- -D warnings

unit: ui
	cd ui && npm test
	cargo test --workspace -- --skip faults::
	bash scripts/faults.sh
	bash scripts/bench.sh --quick

build: ui
	cargo build --workspace --bins

e2e: build
	bash tests/e2e/run.sh

# A .deb made from the debug build is installed with apt-get, started until its window shows,
# its `healer --version` run, and removed (needs root, as CI has).
package-test: build
	bash tests/package/install.sh

# dist/healer_<version>_amd64.deb: the release build with Tauri's bundler (icons, desktop entry,
# the tray, and the `healer` CLI in /usr/bin).
package: setup-run ui
	cargo build --release -p healer -p healer-desktop
	bash scripts/package.sh release

# Rewrite ui/src/bindings.ts from the Rust commands (a test fails while it is stale).
bindings:
	HEALER_UPDATE_BINDINGS=1 cargo test -p healer-desktop --test bindings

# Figures for the notes: the release app's memory after 10 s idle, window open and closed
# (`bash scripts/measure-memory.sh --each` also measures each WebKit knob alone).
figures: ui
	cargo build --release -p healer -p healer-desktop
	bash scripts/measure-memory.sh

# The reliability suite alone, with its figures: faults injected, runs lost, processes left,
# secrets leaked (also part of `make test`).
faults:
	bash scripts/faults.sh

# Every benchmark's figures, then one table: each figure, its target, met or not (the list is
# the [[bench]] targets of Cargo.toml; `make test` runs each in quick mode, so that one which no
# longer runs fails the tests). Setup first: the cluster's figures need the Temporal CLI.
bench: setup-test
	bash scripts/bench.sh
