//! The `ptxas@<version>` targets: issue 6.
