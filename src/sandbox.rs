//! Placeholder: being written (sandbox for the maintainer's eval and syntax checks).
